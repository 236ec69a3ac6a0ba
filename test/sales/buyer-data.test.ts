import { expect, test } from 'bun:test';
import { TaskStore } from '../../core/ports/tasks.ts';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, type TaskClient } from '../support/agent.ts';
import { bothVersionsErrors, schemaErrors } from '../support/schemas.ts';
import { loopbackResolver, TEST_CERT } from '../support/loopback.ts';
import { startTlsFront } from '../support/tls-front.ts';
import { HOUR, MIN, startSalesWorld, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';
import { sha256 } from './support/sha256.ts';

const member = (i: number, domain = 'crm.example') => ({ external_id: `cust-${i}`, hashed_email: sha256(`user${i}@${domain}`) });

let n = 0;
const key = (p: string) => `${p}-key-${String(++n).padStart(12, '0')}`;

const spot = (id: string) => ({
  creative_id: id,
  name: id,
  format_id: { agent_url: REFERENCE_AGENT, id: 'video_ctv_preroll_30s' },
  assets: { video: { asset_type: 'video', url: `https://cdn.acme.example/${id}.mp4`, width: 1920, height: 1080, duration_ms: 30000 } },
});

const PRODUCTS = [
  { id: 'sku-1', title: 'Trail tent', price: { amount: 199, currency: 'USD' }, link: 'https://shop.example/tent', image_link: 'https://shop.example/tent.jpg' },
  { id: 'sku-2', title: 'Day pack', price: '49.90 USD', link: 'https://shop.example/pack' },
  { id: 'sku-3', title: 'Broken item', link: 'javascript:alert(1)' },
];

interface World extends SalesWorld {
  front: ReturnType<typeof startTlsFront>;
}

forEachDatabase<World>(
  'sales buyer data',
  async (adapter, schema) => {
    const front = startTlsFront();
    // Feeds the seller fetches: JSON, CSV with mapped fields, and one that is gone.
    front.route('feeds.pub.test', (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/products.json') return Response.json({ items: PRODUCTS.slice(0, 2) });
      if (path === '/stores.csv')
        return new Response('store_code,store_name,site\ns1,"Downtown, Main St",https://shop.example/s1\ns2,Airport,https://shop.example/s2\n', {
          headers: { 'content-type': 'text/csv' },
        });
      return new Response('gone', { status: 404, headers: { 'content-type': 'text/plain' } });
    });
    const w = await startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      sales: { minAudienceSize: 5, audienceMatchRate: 1, catalogSyncItems: 20 },
      crawler: { resolver: loopbackResolver(['pub.test']), ca: TEST_CERT },
    });
    return Object.assign(w, { front });
  },
  async (w) => {
    await w.close();
    w.front.stop();
  },
  (get) => {
    const account = async (c: TaskClient, host: string) =>
      (
        await c.call('sync_accounts', {
          idempotency_key: key('acc'),
          accounts: [{ brand: { domain: `${host}-data.example` }, operator: 'acme.example', billing: 'operator' }],
        })
      ).body.accounts[0].account_id as string;

    for (const host of HOSTS) {
      test(`${host}: sync_audiences with hashed members: ready, too small (AUDIENCE_TOO_SMALL), removals, deletion, discovery`, async () => {
        const c = await get().client(host);
        const acc = await account(c, host);
        const args = {
          idempotency_key: key('aud'),
          account: { account_id: acc },
          audiences: [
            { audience_id: 'loyal', name: 'Loyal customers', audience_type: 'crm', consent_basis: 'consent', add: [1, 2, 3, 4, 5, 6].map((i) => member(i)) },
            {
              audience_id: 'tiny',
              add: [
                { external_id: 'x1', hashed_phone: sha256('+15551234567') },
                { external_id: 'x2', uids: [{ type: 'uid2', value: 'A4mQ-uid2-token' }] },
              ],
            },
          ],
        };
        expect(bothVersionsErrors('media-buy/sync-audiences-request.json', args)).toEqual([]);
        const synced = await c.call('sync_audiences', args);
        expect(synced.ok).toBe(true);
        expect(bothVersionsErrors('media-buy/sync-audiences-response.json', synced.body)).toEqual([]);
        const [loyal, tiny] = synced.body.audiences;
        expect(loyal).toMatchObject({
          audience_id: 'loyal',
          action: 'created',
          status: 'ready',
          uploaded_count: 6,
          total_uploaded_count: 6,
          matched_count: 6,
          effective_match_rate: 1,
          minimum_size: 5,
        });
        expect(loyal.match_breakdown).toEqual([{ id_type: 'hashed_email', submitted: 6, matched: 6, match_rate: 1 }]);
        expect(tiny).toMatchObject({
          status: 'too_small',
          matched_count: 2,
          errors: [{ code: 'AUDIENCE_TOO_SMALL', details: { minimum_size: 5, current_size: 2 } }],
        });
        expect(schemaErrors('error-details/audience-too-small.json', tiny.errors[0].details)).toEqual([]);
        expect(tiny.match_breakdown.map((b: any) => b.id_type)).toEqual(['hashed_phone', 'uid2']);

        const changed = await c.call('sync_audiences', {
          idempotency_key: key('aud'),
          account: { account_id: acc },
          audiences: [
            { audience_id: 'loyal', remove: [member(1), member(2)] },
            { audience_id: 'tiny', delete: true },
          ],
        });
        expect(bothVersionsErrors('media-buy/sync-audiences-response.json', changed.body)).toEqual([]);
        expect(changed.body.audiences.map((a: any) => [a.audience_id, a.action, a.status, a.total_uploaded_count])).toEqual([
          ['loyal', 'updated', 'too_small', 4],
          ['tiny', 'deleted', undefined, undefined],
        ]);
        const listed = await c.call('sync_audiences', { idempotency_key: key('aud'), account: { account_id: acc } });
        expect(listed.body.audiences.map((a: any) => [a.audience_id, a.action, a.name])).toEqual([['loyal', 'unchanged', 'Loyal customers']]);
        await c.close();
      });

      test(`${host}: log_event against an event source, deduplicated by event id, attributed to the serving buy's delivery; performance feedback shows in get_media_buys`, async () => {
        const w = get();
        const c = await w.client(host);
        const acc = await account(c, host);
        const start = w.clock.now();
        const created = await c.call('create_media_buy', {
          idempotency_key: key('buy'),
          account: { account_id: acc },
          start_time: 'asap',
          end_time: new Date(start.getTime() + 24 * HOUR).toISOString(),
          packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000, creatives: [spot(`${host}-conv`)] }],
        });
        const buyId = created.body.media_buy_id as string;
        await w.advance(MIN);
        const sources = {
          idempotency_key: key('src'),
          account: { account_id: acc },
          event_sources: [{ event_source_id: `${host}-web`, name: 'Web pixel', event_types: ['purchase', 'lead'] }],
        };
        expect(bothVersionsErrors('media-buy/sync-event-sources-request.json', sources)).toEqual([]);
        const synced = await c.call('sync_event_sources', sources);
        expect(bothVersionsErrors('media-buy/sync-event-sources-response.json', synced.body)).toEqual([]);
        expect(synced.body.event_sources[0]).toMatchObject({ event_source_id: `${host}-web`, action: 'created', managed_by: 'buyer' });

        const at = w.clock.now().toISOString();
        const events = {
          idempotency_key: key('evt'),
          event_source_id: `${host}-web`,
          events: [
            {
              event_id: 'o-1',
              event_type: 'purchase',
              event_time: at,
              custom_data: { value: 40, currency: 'USD' },
              user_match: { hashed_email: sha256('a@b.example') },
            },
            { event_id: 'o-2', event_type: 'purchase', event_time: at, custom_data: { value: 60, currency: 'USD' } },
            { event_id: 'o-2', event_type: 'purchase', event_time: at },
            { event_id: 'o-3', event_type: 'page_view', event_time: at },
          ],
        };
        expect(bothVersionsErrors('media-buy/log-event-request.json', events)).toEqual([]);
        const logged = await c.call('log_event', events);
        expect(bothVersionsErrors('media-buy/log-event-response.json', logged.body)).toEqual([]);
        expect(logged.body).toMatchObject({ events_received: 4, events_processed: 2, partial_failures: [{ event_id: 'o-3', code: 'INVALID_REQUEST' }] });
        // Of the two valid events (o-1, o-2), only o-1 names its user.
        expect(logged.body.match_quality).toBe(0.5);
        // The same events again (a new request): nothing new.
        const again = await c.call('log_event', { ...events, idempotency_key: key('evt') });
        expect(again.body).toMatchObject({ events_received: 4, events_processed: 0 });
        // An event_id whose first event has a type the source does not track: the next valid one with that id is the event.
        const retyped = await c.call('log_event', {
          idempotency_key: key('evt'),
          event_source_id: `${host}-web`,
          events: [
            { event_id: 'o-4', event_type: 'page_view', event_time: at, custom_data: { value: 1000, currency: 'USD' } },
            { event_id: 'o-4', event_type: 'lead', event_time: at, custom_data: { value: 5, currency: 'USD' } },
            { event_id: 'o-4', event_type: 'lead', event_time: at, custom_data: { value: 7, currency: 'USD' } },
          ],
        });
        expect(retyped.body).toMatchObject({ events_received: 3, events_processed: 1, partial_failures: [{ event_id: 'o-4', code: 'INVALID_REQUEST' }] });
        expect(retyped.body.partial_failures).toHaveLength(1);
        expect(retyped.body.warnings).toEqual(['1 event(s) repeated an event_id already logged for this source']);
        // A batch with no valid event (all too old) matched nothing: match_quality 0, each event a partial failure.
        const stale = new Date(w.clock.now().getTime() - 120 * 86_400_000).toISOString();
        const old = await c.call('log_event', {
          idempotency_key: key('evt'),
          event_source_id: `${host}-web`,
          events: [{ event_id: 'old-1', event_type: 'purchase', event_time: stale, user_match: { hashed_email: sha256('a@b.example') } }],
        });
        expect(bothVersionsErrors('media-buy/log-event-response.json', old.body)).toEqual([]);
        expect(old.body).toMatchObject({ events_received: 1, events_processed: 0, match_quality: 0, partial_failures: [{ event_id: 'old-1' }] });
        // The source's pixel: a hit is one event (the same event_id again is the same event); unknown pixels and untracked types record nothing.
        const setup = synced.body.event_sources[0].setup;
        expect(setup.snippet_type).toBe('html');
        const src = /src="([^"]+)"/.exec(setup.snippet)![1]!;
        const pixel = new URL(src.replace('{EVENT_ID}', 'px-1').replace('event_type=purchase', 'event_type=lead'));
        pixel.searchParams.set('value', '15');
        pixel.searchParams.set('currency', 'USD');
        const hit = await w.seller.fetch(`${pixel.pathname}${pixel.search}`);
        expect(hit.status).toBe(200);
        expect(hit.headers.get('content-type')).toBe('image/gif');
        expect((await w.seller.fetch(`${pixel.pathname}${pixel.search}`)).status).toBe(200);
        expect((await w.seller.fetch(`${pixel.pathname}?event_type=page_view`)).status).toBe(400);
        expect((await w.seller.fetch(`/events/pixel/px_${'0'.repeat(32)}?event_type=lead`)).status).toBe(404);
        // A source naming its sites takes hits from their pages only.
        const shop = await c.call('sync_event_sources', {
          idempotency_key: key('src'),
          account: { account_id: acc },
          event_sources: [{ event_source_id: `${host}-shop`, event_types: ['purchase'], allowed_domains: ['shop.example'] }],
        });
        const shopPixel = new URL(/src="([^"]+)"/.exec(shop.body.event_sources[0].setup.snippet)![1]!.replace('{EVENT_ID}', 'shop-1'));
        const fromPath = `${shopPixel.pathname}${shopPixel.search}`;
        expect((await w.seller.fetch(fromPath, { headers: { referer: 'https://evil.example/page' } })).status).toBe(403);
        expect((await w.seller.fetch(fromPath)).status).toBe(403);
        expect((await w.seller.fetch(fromPath, { headers: { referer: 'https://www.shop.example/checkout' } })).status).toBe(200);

        await w.advance(HOUR);
        const delivery = await c.call('get_media_buy_delivery', { media_buy_ids: [buyId] });
        expect(bothVersionsErrors('media-buy/get-media-buy-delivery-response.json', delivery.body)).toEqual([]);
        expect(delivery.body.media_buy_deliveries[0].totals).toMatchObject({ conversions: 5, conversion_value: 120 });
        expect(delivery.body.media_buy_deliveries[0].totals.impressions).toBeGreaterThan(0);

        const pkg = created.body.packages[0].package_id;
        const feedback = {
          idempotency_key: key('fb'),
          media_buy_id: buyId,
          package_id: pkg,
          measurement_period: { start: start.toISOString(), end: w.clock.now().toISOString() },
          performance_index: 1.3,
          metric_type: 'conversion_rate',
        };
        expect(bothVersionsErrors('media-buy/provide-performance-feedback-request.json', feedback)).toEqual([]);
        const given = await c.call('provide_performance_feedback', feedback);
        expect(bothVersionsErrors('media-buy/provide-performance-feedback-response.json', given.body)).toEqual([]);
        expect(given.body.success).toBe(true);
        await c.call('provide_performance_feedback', {
          idempotency_key: key('fb'),
          media_buy_id: buyId,
          measurement_period: feedback.measurement_period,
          performance_index: 0.9,
        });
        const buys = await c.call('get_media_buys', { media_buy_ids: [buyId] });
        expect(bothVersionsErrors('media-buy/get-media-buys-response.json', buys.body)).toEqual([]);
        const received = buys.body.media_buys[0].performance_feedback;
        expect(received.map((f: any) => [f.package_id, f.performance_index, f.metric_type, f.feedback_source, f.status])).toEqual([
          [pkg, 1.3, 'conversion_rate', 'buyer_attribution', 'accepted'],
          [undefined, 0.9, 'overall_performance', 'buyer_attribution', 'accepted'],
        ]);
        for (const f of received) expect(bothVersionsErrors('core/performance-feedback.json', f)).toEqual([]);
        await c.close();
      });

      test(`${host}: sync_catalogs inline (item issues, strict and lenient, unchanged) and feeds fetched asynchronously with progress`, async () => {
        const w = get();
        const c = await w.client(host);
        const acc = await account(c, host);
        const inline = { idempotency_key: key('cat'), account: { account_id: acc }, catalogs: [{ catalog_id: 'summer', type: 'product', items: PRODUCTS }] };
        expect(bothVersionsErrors('media-buy/sync-catalogs-request.json', inline)).toEqual([]);
        const strict = await c.call('sync_catalogs', inline);
        expect(bothVersionsErrors('media-buy/sync-catalogs-response.json', strict.body)).toEqual([]);
        expect(strict.body.catalogs[0]).toMatchObject({
          catalog_id: 'summer',
          action: 'failed',
          errors: [{ code: 'VALIDATION_ERROR', details: { code: 'ITEM_VALIDATION_FAILED' } }],
        });
        expect(strict.body.catalogs[0].item_issues.find((i: any) => i.status === 'rejected')).toEqual({
          item_id: 'sku-3',
          status: 'rejected',
          reasons: ['link is not an http(s) URL', 'missing or malformed price', 'missing link (an http(s) landing page)'],
        });

        const lenient = await c.call('sync_catalogs', { ...inline, idempotency_key: key('cat'), validation_mode: 'lenient' });
        expect(bothVersionsErrors('media-buy/sync-catalogs-response.json', lenient.body)).toEqual([]);
        expect(lenient.body.catalogs[0]).toMatchObject({ action: 'created', item_count: 3, items_approved: 2, items_rejected: 1 });
        expect(lenient.body.catalogs[0].item_issues.map((i: any) => [i.item_id, i.status])).toEqual([
          ['sku-2', 'warning'],
          ['sku-3', 'rejected'],
        ]);
        expect((await c.call('sync_catalogs', { ...inline, idempotency_key: key('cat'), validation_mode: 'lenient' })).body.catalogs[0].action).toBe(
          'unchanged',
        );

        const feeds = {
          idempotency_key: key('cat'),
          account: { account_id: acc },
          catalogs: [
            { catalog_id: 'feed-products', type: 'product', url: w.front.url('feeds.pub.test', '/products.json'), feed_format: 'custom' },
            {
              catalog_id: 'feed-stores',
              type: 'store',
              url: w.front.url('feeds.pub.test', '/stores.csv'),
              feed_field_mappings: [
                { feed_field: 'store_code', catalog_field: 'id' },
                { feed_field: 'store_name', catalog_field: 'name' },
                { feed_field: 'site', catalog_field: 'url' },
              ],
            },
            { catalog_id: 'feed-gone', type: 'product', url: w.front.url('feeds.pub.test', '/gone.json') },
          ],
        };
        const submitted = await c.call('sync_catalogs', feeds);
        expect(submitted.body.status).toBe('submitted');
        expect(schemaErrors('media-buy/sync-catalogs-response.json', submitted.body, '3.1.19')).toEqual([]);
        const taskId = submitted.body.task_id as string;
        const store = w.seller.deployment.get(TaskStore);
        await store.runDue();
        const first = await c.poll(taskId);
        expect(first.status).toBe('working');
        const record = (await w.seller.fetch(`/tasks/${taskId}`, { token: 'sales-test-token-0123456789' }).then((r) => r.json())) as any;
        expect(record.progress).toMatchObject({ percentage: 33, step_number: 2, total_steps: 3 });
        await store.runDue();
        await store.runDue();
        const done = await c.poll(taskId);
        expect(done.status).toBe('completed');
        expect(bothVersionsErrors('media-buy/sync-catalogs-response.json', done.result)).toEqual([]);
        expect(done.result!.catalogs.map((x: any) => [x.catalog_id, x.action, x.item_count, x.errors?.[0]?.details?.code])).toEqual([
          ['feed-products', 'created', 2, undefined],
          ['feed-stores', 'created', 2, undefined],
          ['feed-gone', 'failed', undefined, 'FEED_FETCH_FAILED'],
        ]);
        // Discovery lists what is stored.
        const listed = await c.call('sync_catalogs', { idempotency_key: key('cat'), account: { account_id: acc } });
        expect(listed.body.catalogs.map((x: any) => x.catalog_id).sort()).toEqual(['feed-products', 'feed-stores', 'summer']);
        await c.close();
      });
    }
  },
);
