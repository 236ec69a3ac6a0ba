import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import inventoryDb from '../../plugins/inventory-db/index.ts';
import creative from '../../plugins/creative/index.ts';
import salesAccounts from '../../plugins/sales-accounts/index.ts';
import salesCreatives from '../../plugins/sales-creatives/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { forEachDatabase } from '../support/db.ts';
import { freePort, startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';

/**
 * The creative agent as an ad server over the deployment's creative library (sales-creatives owns
 * it, the creative agent reads it through the CreativeStore port): sync and list, serving tags with
 * trackers fetched over real HTTP, delivery from what the trackers recorded, usage reports; each task
 * refuses other organizations' creatives and bad input (4xx, nothing written).
 */
const A = 'ad-server-token-a-0123456789';
const B = 'ad-server-token-b-0123456789';
const AGENT_URL = 'https://creative.test.example';
const ACCOUNT = { brand: { domain: 'acme.example' }, operator: 'acme.example' };
const fid = (id: string) => ({ agent_url: AGENT_URL, id });
let keys = 0;
const key = () => `ad-server-key-${String(++keys).padStart(6, '0')}-0123456789`;

const HERO = {
  creative_id: 'hero_300x250',
  name: 'Hero banner',
  format_id: fid('display_300x250_image'),
  assets: {
    banner_image: { asset_type: 'image', url: 'https://cdn.acme.example/hero.png', width: 300, height: 250 },
    click_url: { asset_type: 'url', url_type: 'clickthrough', url: 'https://acme.example/landing' },
  },
};
const SPOT = {
  creative_id: 'spot_30s',
  name: 'TV spot',
  format_id: fid('video_30s'),
  assets: { video: { asset_type: 'video', url: 'https://cdn.acme.example/spot.mp4', width: 1920, height: 1080, duration_ms: 30000 } },
};

async function start(adapter: Parameters<typeof startServer>[0], schema: string): Promise<TestServer> {
  const port = freePort();
  return startServer(
    adapter,
    schema,
    [
      auth({
        testTokens: [
          { token: A, name: 'Org A' },
          { token: B, name: 'Org B' },
        ],
      }),
      tasks({ worker: false }),
      idempotency(),
      inventoryDb(),
      creative({ agentUrl: AGENT_URL, pruneIntervalMs: 0 }),
      salesAccounts({ sandbox: true }),
      salesCreatives({ sandbox: true }),
      // The whole deployment at /tasks, and a creative agent's path (no media buys) at /creative/tasks.
      restTasks({ mounts: [{ prefix: '' }, { prefix: '/creative', protocols: ['creative', 'compliance'] }] }),
    ],
    { env: { PUBLIC_URL: `http://127.0.0.1:${port}`, PROTOCOL_NAMESPACE: 'adcp' }, port },
  );
}

const call = async (s: TestServer, token: string, task: string, json: Record<string, unknown>) => {
  const res = await s.fetch(`/tasks/${task}`, { method: 'POST', token, json });
  return { status: res.status, body: (await res.json()) as any };
};

const count = async (s: TestServer, table: string) =>
  (await s.deployment.get(Database).query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)}`))[0]!.n;

// Two instances on one database: tags and tracker hits are rows, so either instance serves and counts them.
forEachDatabase<TestServer & { second: TestServer }>(
  'creative ad server',
  async (adapter, schema) => Object.assign(await start(adapter, schema), { second: await start(adapter, schema) }),
  async (s) => {
    await s.second.close();
    await s.close();
  },
  (get) => {
    let tagManifest: any;

    test('sync_creatives and list_creatives: the library, per account, schema-valid', async () => {
      const s = get();
      const synced = await call(s, A, 'sync_creatives', { idempotency_key: key(), account: ACCOUNT, creatives: [HERO, SPOT] });
      expect(synced.status).toBe(200);
      expect(bothVersionsErrors('creative/sync-creatives-response.json', synced.body)).toEqual([]);
      expect(synced.body.creatives.map((c: any) => [c.creative_id, c.action])).toEqual([
        ['hero_300x250', 'created'],
        ['spot_30s', 'created'],
      ]);
      const listed = await call(s, A, 'list_creatives', { account: ACCOUNT, filters: { statuses: ['approved'] }, pagination: { max_results: 1 } });
      expect(listed.status).toBe(200);
      expect(bothVersionsErrors('creative/list-creatives-response.json', listed.body)).toEqual([]);
      expect(listed.body.creatives.map((c: any) => c.creative_id)).toEqual(['hero_300x250']);
      expect(listed.body.pagination.has_more).toBe(true);
      // Another organization sees none of it, and cannot name the account.
      const other = await call(s, B, 'list_creatives', {});
      expect(other.body.creatives).toEqual([]);
    });

    test("on a creative agent's path, assignments to packages are answered per creative, the creatives synced", async () => {
      const s = get();
      const res = await s.fetch('/creative/tasks/sync_creatives', {
        method: 'POST',
        token: A,
        json: { idempotency_key: key(), account: ACCOUNT, creatives: [HERO], assignments: [{ creative_id: 'hero_300x250', package_id: 'pkg_x' }] },
      });
      const body = (await res.json()) as any;
      expect(res.status).toBe(200);
      expect(bothVersionsErrors('creative/sync-creatives-response.json', body)).toEqual([]);
      expect(body.creatives[0]).toMatchObject({ creative_id: 'hero_300x250', action: 'unchanged', assigned_to: [] });
      expect(Object.keys(body.creatives[0].assignment_errors)).toEqual(['pkg_x']);
    });

    test('capabilities declare the creative-ad-server specialism and the library', async () => {
      const { body } = await call(get(), A, 'get_adcp_capabilities', {});
      expect(body.specialisms).toContain('creative-ad-server');
      expect(body.creative.has_creative_library).toBe(true);
    });

    test('build_creative of a library creative: a serving tag with trackers; VAST for video', async () => {
      const s = get();
      const built = await call(s, A, 'build_creative', {
        idempotency_key: key(),
        creative_id: 'hero_300x250',
        account: ACCOUNT,
        target_format_id: fid('display_300x250_image'),
        media_buy_id: 'mb_1',
        package_id: 'pkg_1',
      });
      expect(built.status).toBe(200);
      expect(bothVersionsErrors('media-buy/build-creative-response.json', built.body)).toEqual([]);
      tagManifest = built.body.creative_manifest;
      expect(tagManifest.assets.serving_tag.asset_type).toBe('html');
      expect(tagManifest.assets.serving_tag.content).toContain('https://cdn.acme.example/hero.png');
      expect(tagManifest.assets.impression_tracker.url).toStartWith(`${s.base}/creative-track/`);

      const vast = await call(s, A, 'build_creative', {
        idempotency_key: key(),
        creative_id: 'spot_30s',
        target_format_id: fid('vast_30s'),
        media_buy_id: 'mb_1',
      });
      expect(vast.status).toBe(200);
      expect(bothVersionsErrors('media-buy/build-creative-response.json', vast.body)).toEqual([]);
      const tag = vast.body.creative_manifest.assets.serving_tag;
      expect(tag).toMatchObject({ asset_type: 'vast', delivery_type: 'inline' });
      expect(tag.content).toContain('<Impression><![CDATA[');
      expect(tag.content).toContain('https://cdn.acme.example/spot.mp4');
    });

    test('trackers record impressions and clicks over HTTP; get_creative_delivery reports them', async () => {
      const s = get();
      const impression = tagManifest.assets.impression_tracker.url as string;
      const click = tagManifest.assets.click_tracker.url as string;
      for (let i = 0; i < 3; i++) {
        const res = await fetch(impression);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/gif');
      }
      const res = await fetch(click, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('https://acme.example/landing');
      // An unknown tag or kind records nothing.
      const before = await count(s, 'creative_delivery_events');
      expect((await fetch(`${s.base}/creative-track/${'x'.repeat(32)}/impression`)).status).toBe(404);
      expect((await fetch(impression.replace(/impression$/, 'view'))).status).toBe(404);
      expect(await count(s, 'creative_delivery_events')).toBe(before);

      // The other instance hands out the same tag for the same placement, and records its hits.
      const again = await call(s.second, A, 'build_creative', {
        idempotency_key: key(),
        creative_id: 'hero_300x250',
        account: ACCOUNT,
        target_format_id: fid('display_300x250_image'),
        media_buy_id: 'mb_1',
        package_id: 'pkg_1',
      });
      const secondPixel = again.body.creative_manifest.assets.impression_tracker.url as string;
      expect(secondPixel).toBe(impression.replace(s.base, s.second.base));
      expect((await fetch(secondPixel)).status).toBe(200);

      const delivery = await call(s, A, 'get_creative_delivery', { account: ACCOUNT, media_buy_ids: ['mb_1'] });
      expect(delivery.status).toBe(200);
      expect(bothVersionsErrors('creative/get-creative-delivery-response.json', delivery.body)).toEqual([]);
      const hero = delivery.body.creatives.find((c: any) => c.creative_id === 'hero_300x250');
      expect(hero.totals).toMatchObject({ impressions: 4, clicks: 1 });
      expect(hero.media_buy_id).toBe('mb_1');
      expect(hero.variants).toHaveLength(1);
      const spot = delivery.body.creatives.find((c: any) => c.creative_id === 'spot_30s');
      expect(spot.totals).toMatchObject({ impressions: 0, clicks: 0 });
      // A period before the hits counts none.
      const earlier = await call(s, A, 'get_creative_delivery', { creative_ids: ['hero_300x250'], start_date: '2001-01-01', end_date: '2001-01-31' });
      expect(earlier.body.creatives[0].totals.impressions).toBe(0);
    });

    test('report_usage keeps records of library creatives, answers others in errors', async () => {
      const s = get();
      const period = { start: '2026-03-01T00:00:00Z', end: '2026-03-31T23:59:59Z' };
      const usage = { account: ACCOUNT, creative_id: 'hero_300x250', impressions: 4, vendor_cost: 0.01, currency: 'USD', pricing_option_id: 'po_cpm' };
      const reported = await call(s, A, 'report_usage', {
        idempotency_key: key(),
        reporting_period: period,
        usage: [usage, { ...usage, creative_id: 'nope' }],
      });
      expect(reported.status).toBe(200);
      expect(bothVersionsErrors('account/report-usage-response.json', reported.body)).toEqual([]);
      expect(reported.body.accepted).toBe(1);
      expect(reported.body.errors).toEqual([expect.objectContaining({ code: 'CREATIVE_NOT_FOUND', field: 'usage[1].creative_id' })]);
      expect(await count(s, 'creative_usage_reports')).toBe(1);
    });

    test('report_usage of a generated creative: the account it was built for, named either way, takes it', async () => {
      const s = get();
      const target = fid('display_300x250_html');
      const built = await call(s, A, 'build_creative', {
        idempotency_key: key(),
        account: ACCOUNT,
        target_format_id: target,
        message: 'Hero',
        creative_manifest: { format_id: target, assets: { promoted_offerings: { brand_manifest: { name: 'Acme' } } } },
      });
      expect(built.status).toBe(200);
      expect(bothVersionsErrors('media-buy/build-creative-response.json', built.body)).toEqual([]);
      const [row] = await s.deployment
        .get(Database)
        .query<{ account_id: string }>(sql`SELECT account_id FROM sales_creatives WHERE creative_id = 'hero_300x250'`);
      const usage = { creative_id: built.body.build_variant_id, vendor_cost: 0.2, currency: 'USD' };
      const before = await count(s, 'creative_usage_reports');
      const reported = await call(s, A, 'report_usage', {
        idempotency_key: key(),
        reporting_period: { start: '2026-03-01T00:00:00Z', end: '2026-03-31T23:59:59Z' },
        // The account's id names the same account as its brand and operator; another account does not.
        usage: [
          { ...usage, account: { account_id: row!.account_id } },
          { ...usage, account: { brand: { domain: 'elsewhere.example' }, operator: 'acme.example' } },
        ],
      });
      expect(bothVersionsErrors('account/report-usage-response.json', reported.body)).toEqual([]);
      expect(reported.body.accepted).toBe(1);
      expect(reported.body.errors.map((e: any) => [e.code, e.field])).toEqual([['CREATIVE_NOT_FOUND', 'usage[1].creative_id']]);
      const [kept] = await s.deployment
        .get(Database)
        .query<{ account_id: string; build_variant_id: string }>(sql`SELECT account_id, build_variant_id FROM creative_usage_reports ORDER BY id DESC LIMIT 1`);
      expect(kept).toEqual({ account_id: row!.account_id, build_variant_id: usage.creative_id });
      expect(await count(s, 'creative_usage_reports')).toBe(before + 1);

      // Promoted into the library of another account (its creative_id the build_variant_id): reported there, with its lineage.
      const elsewhere = { brand: { domain: 'elsewhere.example' }, operator: 'acme.example' };
      const promoted = { ...HERO, creative_id: usage.creative_id, name: 'Generated hero' };
      expect((await call(s, A, 'sync_creatives', { idempotency_key: key(), account: elsewhere, creatives: [promoted] })).status).toBe(200);
      const again = await call(s, A, 'report_usage', {
        idempotency_key: key(),
        reporting_period: { start: '2026-03-01T00:00:00Z', end: '2026-03-31T23:59:59Z' },
        usage: [{ ...usage, account: elsewhere }],
      });
      expect(bothVersionsErrors('account/report-usage-response.json', again.body)).toEqual([]);
      expect([again.body.accepted, again.body.errors]).toEqual([1, undefined]);
      const [last] = await s.deployment
        .get(Database)
        .query<{ account_id: string; build_variant_id: string }>(sql`SELECT account_id, build_variant_id FROM creative_usage_reports ORDER BY id DESC LIMIT 1`);
      expect(last!.build_variant_id).toBe(usage.creative_id);
      expect(last!.account_id).not.toBe(row!.account_id);
    });

    test('another organization cannot build, read delivery of, or report usage on these creatives', async () => {
      const s = get();
      const built = await call(s, B, 'build_creative', { idempotency_key: key(), creative_id: 'hero_300x250', target_format_id: fid('display_300x250_image') });
      expect([built.status, built.body.error?.code]).toEqual([404, 'CREATIVE_NOT_FOUND']);
      const delivery = await call(s, B, 'get_creative_delivery', { creative_ids: ['hero_300x250'] });
      expect(delivery.status).toBe(200);
      expect(delivery.body.creatives).toEqual([]);
      const reported = await call(s, B, 'report_usage', {
        idempotency_key: key(),
        reporting_period: { start: '2026-03-01T00:00:00Z', end: '2026-03-31T23:59:59Z' },
        usage: [{ account: ACCOUNT, creative_id: 'hero_300x250', vendor_cost: 1, currency: 'USD' }],
      });
      expect(reported.body.accepted).toBe(0);
      expect(reported.body.errors[0].code).toBe('CREATIVE_NOT_FOUND');
      const listed = await call(s, B, 'list_creatives', { filters: { creative_ids: ['hero_300x250'] } });
      expect(listed.body.creatives).toEqual([]);
      expect(await count(s, 'creative_usage_reports')).toBe(3);

      // Naming A's account by its id does not open it.
      const [row] = await s.deployment
        .get(Database)
        .query<{ account_id: string }>(sql`SELECT account_id FROM sales_creatives WHERE creative_id = 'hero_300x250'`);
      const foreign = { account_id: row!.account_id };
      const synced = await call(s, B, 'sync_creatives', { idempotency_key: key(), account: foreign, creatives: [{ ...HERO, name: 'Taken over' }] });
      expect([synced.status, synced.body.error?.code ?? synced.body.code]).toEqual([404, 'ACCOUNT_NOT_FOUND']);
      expect((await call(s, B, 'list_creatives', { account: foreign })).body.creatives).toEqual([]);
      expect((await call(s, B, 'get_creative_delivery', { account: foreign, creative_ids: ['hero_300x250'] })).body.creatives).toEqual([]);
      const viaAccount = await call(s, B, 'build_creative', {
        idempotency_key: key(),
        account: foreign,
        creative_id: 'hero_300x250',
        target_format_id: fid('display_300x250_image'),
      });
      expect(viaAccount.status).toBe(404);
      const [mine] = (await call(s, A, 'list_creatives', { filters: { creative_ids: ['hero_300x250'] } })).body.creatives;
      expect(mine.name).toBe('Hero banner');
    });

    test("one organization's accounts: delivery per account, a creative id in two accounts needs the account", async () => {
      const s = get();
      const other = { brand: { domain: 'other.example' }, operator: 'other.example' };
      await call(s, A, 'sync_creatives', { idempotency_key: key(), account: other, creatives: [HERO] });
      const target = { target_format_id: fid('display_300x250_image'), media_buy_id: 'mb_2' };
      const ambiguous = await call(s, A, 'build_creative', { idempotency_key: key(), creative_id: 'hero_300x250', ...target });
      expect([ambiguous.status, ambiguous.body.field]).toEqual([400, 'account']);
      const built = await call(s, A, 'build_creative', { idempotency_key: key(), creative_id: 'hero_300x250', account: other, ...target });
      expect(built.status).toBe(200);
      await fetch(built.body.creative_manifest.assets.impression_tracker.url);
      const theirs = await call(s, A, 'get_creative_delivery', { account: other, creative_ids: ['hero_300x250'] });
      expect(theirs.body.creatives.map((c: any) => [c.media_buy_id, c.totals.impressions])).toEqual([['mb_2', 1]]);
      const first = await call(s, A, 'get_creative_delivery', { account: ACCOUNT, creative_ids: ['hero_300x250'] });
      expect(first.body.creatives.map((c: any) => [c.media_buy_id, c.totals.impressions])).toEqual([['mb_1', 4]]);
    });

    test('list_transformers, validate_input and get_creative_features describe what the agent accepts', async () => {
      const s = get();
      const transformers = await call(s, A, 'list_transformers', {});
      expect(transformers.status).toBe(200);
      expect(bothVersionsErrors('creative/list-transformers-response.json', transformers.body)).toEqual([]);
      expect(transformers.body.transformers.map((t: any) => t.transformer_id)).toEqual(['generate', 'adapt', 'serving_tag']);
      const narrowed = await call(s, A, 'list_transformers', { output_format_ids: [fid('display_300x250')], name_search: 'brief' });
      expect(narrowed.body.transformers.map((t: any) => t.transformer_id)).toEqual(['generate']);

      const manifest = { format_id: HERO.format_id, assets: HERO.assets };
      const validated = await call(s, A, 'validate_input', {
        manifest,
        targets: [
          { kind: 'canonical', id: 'display_300x250_image' },
          { kind: 'canonical', id: 'native_standard' },
          { kind: 'product', id: 'prod_1' },
        ],
      });
      expect(validated.status).toBe(200);
      expect(bothVersionsErrors('creative/validate-input-response.json', validated.body)).toEqual([]);
      expect(validated.body.results.map((r: any) => r.result_kind)).toEqual(['validated_pass', 'validated_fail', 'unvalidatable_nondeterministic']);
      expect(validated.body.results[1].violations[0].field).toStartWith('manifest.assets.');

      const features = await call(s, A, 'get_creative_features', { creative_manifest: manifest });
      expect(features.status).toBe(200);
      expect(bothVersionsErrors('creative/get-creative-features-response.json', features.body)).toEqual([]);
      expect(Object.fromEntries(features.body.results.map((r: any) => [r.feature_id, r.value]))).toEqual({
        asset_count: 2,
        format_known: true,
        has_clickthrough: true,
        secure_urls: true,
        format_requirements_met: true,
      });
    });

    test('bad input is a 4xx naming the field, and writes nothing', async () => {
      const s = get();
      const tables = ['creative_serving_tags', 'creative_delivery_events', 'creative_usage_reports', 'sales_creatives'];
      const before = await Promise.all(tables.map((t) => count(s, t)));
      const cases: [string, Record<string, unknown>, number, string][] = [
        ['build_creative', { idempotency_key: key(), creative_id: '', target_format_id: fid('display_300x250_image') }, 400, 'creative_id'],
        [
          'build_creative',
          { idempotency_key: key(), creative_id: 'hero_300x250', account: ACCOUNT, target_format_id: fid('vast_30s') },
          422,
          'target_format_id.id',
        ],
        ['build_creative', { idempotency_key: key(), creative_id: 'missing', target_format_id: fid('display_300x250_image') }, 404, 'creative_id'],
        ['get_creative_delivery', { account: ACCOUNT }, 400, 'media_buy_ids'],
        ['list_transformers', { transformer_ids: [] }, 400, 'transformer_ids'],
        ['validate_input', { manifest: { format_id: 'display_300x250_image', assets: {} } }, 400, 'manifest.format_id'],
        ['validate_input', { manifest: { format_id: HERO.format_id, assets: {} }, targets: [{ kind: 'store', id: 'x' }] }, 400, 'targets[0].kind'],
        ['get_creative_features', { creative_manifest: { format_id: HERO.format_id, assets: {} }, feature_ids: ['mood'] }, 400, 'feature_ids[0]'],
        ['get_creative_delivery', { creative_ids: ['hero_300x250'], start_date: '2026-02-30' }, 400, 'start_date'],
        ['get_creative_delivery', { creative_ids: ['hero_300x250'], start_date: '2026-03-02', end_date: '2026-03-01' }, 400, 'start_date'],
        ['report_usage', { idempotency_key: key(), reporting_period: { start: '2026-03-01T00:00:00Z', end: '2026-03-31T00:00:00Z' }, usage: [] }, 400, 'usage'],
        [
          'report_usage',
          {
            idempotency_key: key(),
            reporting_period: { start: '2026-03-31T00:00:00Z', end: '2026-03-01T00:00:00Z' },
            usage: [{ account: ACCOUNT, vendor_cost: 1, currency: 'USD' }],
          },
          400,
          'reporting_period.end',
        ],
        [
          'report_usage',
          {
            idempotency_key: key(),
            reporting_period: { start: '2026-03-01T00:00:00Z', end: '2026-03-31T00:00:00Z' },
            usage: [{ account: ACCOUNT, vendor_cost: -1, currency: 'usd' }],
          },
          400,
          'usage[0].vendor_cost',
        ],
      ];
      for (const [task, args, status, field] of cases) {
        const { status: got, body } = await call(s, A, task, args);
        expect({ task, field, status: got, at: body.error?.field ?? body.field }).toEqual({ task, field, status, at: field });
      }
      expect(await Promise.all(tables.map((t) => count(s, t)))).toEqual(before);
    });
  },
);
