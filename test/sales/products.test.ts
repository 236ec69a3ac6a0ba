import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { sql } from '../../core/sql.ts';
import { forEachDatabase, DATABASE_URL, describePostgres, dropSchema, uniqueSchema, openDatabase } from '../support/db.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { startSalesWorld, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';
import seed from '../../plugins/inventory-db/seed.json';

const ids = (body: any) => body.products.map((p: any) => p.product_id as string);

forEachDatabase<SalesWorld>(
  'sales products',
  (adapter, schema) => startSalesWorld(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' }, sales: { sandbox: true } }),
  (w) => w.close(),
  (get) => {
    test('a brief ranks by relevance and says why; every product validates against both versions', async () => {
      const c = await get().client('mcp');
      const { body } = await c.call('get_products', { buying_mode: 'brief', brief: 'true crime podcast listeners' });
      expect(bothVersionsErrors('media-buy/get-products-response.json', body)).toEqual([]);
      expect(ids(body)[0]).toBe('podcast_true_crime');
      expect(body.products[0].brief_relevance).toContain('podcast');
      expect(body.sandbox).toBe(true);
      expect(body.cache_scope).toBe('public');
      const p = body.products[0];
      expect(p.forecast.points[0].metrics.impressions.mid).toBeGreaterThan(0);
      expect(p.reporting_capabilities.windowed_pull_granularities).toEqual(['hourly', 'daily', 'monthly']);
      expect(p.format_ids[0]).toEqual({ agent_url: REFERENCE_AGENT, id: 'audio_standard_30s' });
    });

    test("each pricing option publishes the least budget a package takes (a flat rate's price); create refuses a cent less and takes that much", async () => {
      const c = await get().client('mcp');
      const { body } = await c.call('get_products', { buying_mode: 'brief', brief: 'finance markets takeover' });
      const product = body.products.find((p: any) => p.product_id === 'display_finance_takeover');
      const flat = product.pricing_options.find((o: any) => o.pricing_model === 'flat_rate');
      expect(flat.min_spend_per_package).toBe(flat.fixed_price);
      for (const p of body.products) for (const o of p.pricing_options) expect(o.min_spend_per_package).toBeGreaterThan(0);
      const buy = (budget: number) => ({
        idempotency_key: `min-spend-${budget}-${Math.random().toString(36).slice(2, 12)}`,
        account: { brand: { domain: 'minimum.example' }, operator: 'minimum.example' },
        start_time: 'asap',
        end_time: new Date(get().clock.now().getTime() + 7 * 86_400_000).toISOString(),
        packages: [{ product_id: product.product_id, pricing_option_id: flat.pricing_option_id, budget }],
      });
      const below = await c.call('create_media_buy', buy(flat.min_spend_per_package - 0.01));
      expect(below.body.code ?? below.body.errors?.[0]?.code).toBe('BUDGET_TOO_LOW');
      const at = await c.call('create_media_buy', buy(flat.min_spend_per_package));
      expect(at.body.media_buy_id).toBeString();
    });

    test('no brief: the catalog in order, paged with cursors, every product exactly once', async () => {
      const c = await get().client('rest');
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const { body } = await c.call('get_products', { buying_mode: 'brief', pagination: { max_results: 5, ...(cursor ? { cursor } : {}) } });
        expect(bothVersionsErrors('media-buy/get-products-response.json', body)).toEqual([]);
        seen.push(...ids(body));
        expect(body.pagination.total_count).toBe(seed.products.length);
        cursor = body.pagination.cursor;
        if (!body.pagination.has_more) break;
      }
      expect(seen).toEqual(seed.products.map((p) => p.product_id));
    });

    test('refine: more_like_this, omit, include, a request-level ask, and a proposal it does not have', async () => {
      const c = await get().client('a2a');
      const like = await c.call('get_products', {
        buying_mode: 'refine',
        refine: [{ scope: 'product', product_id: 'ctv_sports_premium', action: 'more_like_this' }],
      });
      expect(bothVersionsErrors('media-buy/get-products-response.json', like.body)).toEqual([]);
      expect(ids(like.body)).not.toContain('ctv_sports_premium');
      expect(ids(like.body)[0]).toBe('ctv_entertainment_ros');
      expect(like.body.refinement_applied).toEqual([{ scope: 'product', product_id: 'ctv_sports_premium', status: 'applied' }]);

      const mixed = await c.call('get_products', {
        buying_mode: 'refine',
        brief: 'video',
        refine: [
          { scope: 'product', product_id: 'olv_news_preroll', action: 'omit' },
          { scope: 'request', ask: 'gaming' },
          { scope: 'proposal', proposal_id: 'prop_1' },
        ],
      });
      expect(bothVersionsErrors('media-buy/get-products-response.json', mixed.body)).toEqual([]);
      expect(ids(mixed.body)).not.toContain('olv_news_preroll');
      expect(ids(mixed.body)[0]).toBe('gaming_rewarded_video');
      expect(mixed.body.refinement_applied.map((r: any) => r.status)).toEqual(['applied', 'applied', 'unable']);

      const only = await c.call('get_products', {
        buying_mode: 'refine',
        refine: [
          { scope: 'product', product_id: 'dooh_times_square', action: 'include' },
          { scope: 'product', product_id: 'dooh_transit_network' },
        ],
      });
      expect(ids(only.body).sort()).toEqual(['dooh_times_square', 'dooh_transit_network']);
    });

    test('filters: channels, delivery type, formats, fixed price, currency, countries; forecasts follow budget and dates', async () => {
      const c = await get().client('rest');
      const call = async (filters: Record<string, unknown>) => {
        const { body } = await c.call('get_products', { buying_mode: 'brief', filters });
        expect(bothVersionsErrors('media-buy/get-products-response.json', body)).toEqual([]);
        return body;
      };
      expect(ids(await call({ channels: ['dooh'] })).sort()).toEqual(['dooh_times_square', 'dooh_transit_network']);
      expect(ids(await call({ channels: ['ctv'], delivery_type: 'guaranteed' }))).toEqual(['ctv_sports_premium']);
      expect(ids(await call({ format_ids: [{ agent_url: REFERENCE_AGENT, id: 'native_content' }] }))).toEqual(['native_lifestyle_content']);
      expect(ids(await call({ pricing_currencies: ['EUR'] }))).toEqual(['olv_news_preroll']);
      expect((await call({ is_fixed_price: false })).products.every((p: any) => p.pricing_options.some((o: any) => o.floor_price !== undefined))).toBe(true);
      expect(ids(await call({ countries: ['JP'] }))).toEqual(expect.arrayContaining(['gaming_rewarded_video', 'display_ros_standard']));
      const small = await call({
        channels: ['ctv'],
        delivery_type: 'guaranteed',
        budget_range: { max: 10_000 },
        start_date: '2026-03-10',
        end_date: '2026-03-20',
      });
      const big = await call({
        channels: ['ctv'],
        delivery_type: 'guaranteed',
        budget_range: { max: 40_000 },
        start_date: '2026-03-10',
        end_date: '2026-03-20',
      });
      expect(small.products[0].forecast.points[0].budget).toBe(10_000);
      expect(big.products[0].forecast.points[0].metrics.impressions.mid).toBeGreaterThan(small.products[0].forecast.points[0].metrics.impressions.mid);
    });
  },
);

// The CLI runs in its own process against a database it opens itself: Postgres (a PGlite in memory cannot be shared).
describePostgres('bun run sales import [postgres]', () => {
  test('imports a catalog file, upserts by product_id, and refuses an invalid one naming the field', async () => {
    const schema = uniqueSchema('sales_cli');
    const dir = mkdtempSync(join(tmpdir(), 'sales-cli-'));
    const run = async (file: string) => {
      const child = Bun.spawn(['bun', join(import.meta.dir, '../../scripts/sales.ts'), 'import', file], {
        env: { ...process.env, DATABASE_URL: DATABASE_URL!, DATABASE_SCHEMA: schema, LOG_LEVEL: 'silent' },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      return { out, err, code };
    };
    try {
      const good = join(dir, 'products.json');
      writeFileSync(good, JSON.stringify({ products: [seed.products[0], { ...seed.products[1], name: 'Renamed' }] }));
      expect(await run(good)).toMatchObject({ code: 0, out: `imported 2 products from ${good}\n` });
      writeFileSync(good, JSON.stringify({ products: [{ ...seed.products[1], name: 'Renamed again' }] }));
      expect((await run(good)).code).toBe(0);
      const bad = join(dir, 'bad.json');
      writeFileSync(
        bad,
        JSON.stringify({
          products: [{ ...seed.products[2], pricing_options: [{ pricing_option_id: 'x', pricing_model: 'cpm', currency: 'usd', fixed_price: 1 }] }],
        }),
      );
      const refused = await run(bad);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain('products[0].pricing_options[0].currency');
      const db = await openDatabase('postgres', schema, 2);
      const rows = await db.query<{ product_id: string; name: string }>(sql`SELECT product_id, name FROM inventory_products ORDER BY position`);
      await db.close();
      expect(rows).toEqual([
        { product_id: seed.products[0]!.product_id, name: seed.products[0]!.name },
        { product_id: seed.products[1]!.product_id, name: 'Renamed again' },
      ]);
    } finally {
      await dropSchema('postgres', schema);
    }
  }, 60_000);
});
