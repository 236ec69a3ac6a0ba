import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import creative from '../../plugins/creative/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { forEachDatabase } from '../support/db.ts';
import { freePort, startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors, schemaErrors } from '../support/schemas.ts';

/**
 * report_usage of generated creatives on a creative agent with no library: a build's answer names
 * each produced creative (build_variant_id), the buyer reports usage against it, and only the
 * organization (and account) it was built for can.
 */
const A = 'usage-report-token-a-0123456789';
const B = 'usage-report-token-b-0123456789';
const AGENT_URL = 'https://creative.test.example';
const ACCOUNT = { brand: { domain: 'acme.example' }, operator: 'agency.example' };
const OTHER_ACCOUNT = { brand: { domain: 'other.example' }, operator: 'agency.example' };
const PERIOD = { start: '2026-03-01T00:00:00Z', end: '2026-03-31T23:59:59Z' };
const fid = (id: string) => ({ agent_url: AGENT_URL, id });
let keys = 0;
const key = () => `usage-report-key-${String(++keys).padStart(6, '0')}-0123456789`;
const brief = (target: object) => ({
  message: 'Rocket skates for commuters',
  creative_manifest: { format_id: target, assets: { promoted_offerings: { brand_manifest: { name: 'Acme Rockets', url: 'https://acme.example' } } } },
});

const call = async (s: TestServer, token: string, task: string, json: Record<string, unknown>) => {
  const res = await s.fetch(`/tasks/${task}`, { method: 'POST', token, json });
  return { status: res.status, body: (await res.json()) as any };
};
const count = async (s: TestServer, table: string) =>
  (await s.deployment.get(Database).query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)}`))[0]!.n;
const report = (s: TestServer, token: string, usage: object[]) => call(s, token, 'report_usage', { idempotency_key: key(), reporting_period: PERIOD, usage });

forEachDatabase(
  'report_usage of generated creatives',
  (adapter, schema) => {
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
        creative({ agentUrl: AGENT_URL, pruneIntervalMs: 0 }),
        restTasks(),
      ],
      { env: { PUBLIC_URL: `http://127.0.0.1:${port}`, PROTOCOL_NAMESPACE: 'adcp' }, port },
    );
  },
  async (s) => s.close(),
  (get) => {
    let single = '';
    let multi: string[] = [];

    test('a build names each creative it produced; the answers are valid under both versions', async () => {
      const s = get();
      const request = { idempotency_key: key(), account: ACCOUNT, target_format_id: fid('native_standard'), ...brief(fid('native_standard')) };
      const one = await call(s, A, 'build_creative', request);
      expect(one.status).toBe(200);
      expect(bothVersionsErrors('media-buy/build-creative-response.json', one.body)).toEqual([]);
      expect(one.body.build_variant_id).toMatch(/^bv_[A-Za-z0-9_-]{32}$/);
      single = one.body.build_variant_id;

      const targets = [fid('display_300x250_html'), fid('display_728x90_html')];
      const many = await call(s, A, 'build_creative', { idempotency_key: key(), target_format_ids: targets, ...brief(targets[0]!) });
      expect(many.status).toBe(200);
      expect(bothVersionsErrors('media-buy/build-creative-response.json', many.body)).toEqual([]);
      multi = many.body.creative_manifests.map((m: any) => m.build_variant_id);
      expect(new Set([single, ...multi]).size).toBe(3);
      for (const id of multi) expect(id).toMatch(/^bv_/);
      // A replay answers the same ids; no leaf is recorded twice (builds in key order: one caller, increasing keys).
      const replay = await call(s, A, 'build_creative', request);
      expect(replay.body.build_variant_id).toBe(single);
      const rows = await s.deployment
        .get(Database)
        .query<{ id: string; format_id: string; owner: string }>(sql`SELECT id, format_id, owner FROM creative_build_variants ORDER BY build_id, position`);
      expect(rows.map((r) => [r.id, r.format_id])).toEqual([
        [single, 'native_standard'],
        [multi[0]!, 'display_300x250_html'],
        [multi[1]!, 'display_728x90_html'],
      ]);
    });

    test('usage naming a generated creative is accepted: by its build_variant_id, or a promoted creative_id with it', async () => {
      const s = get();
      const before = await count(s, 'creative_usage_reports');
      const res = await report(s, A, [
        { account: ACCOUNT, creative_id: single, impressions: 1000, vendor_cost: 2.5, currency: 'USD' },
        // Built under no account: reported under the caller's.
        { account: OTHER_ACCOUNT, creative_id: multi[0], vendor_cost: 1, currency: 'EUR' },
        { account: ACCOUNT, creative_id: 'promoted_hero', build_variant_id: single, vendor_cost: 0.5, currency: 'USD' },
      ]);
      expect(res.status).toBe(200);
      expect(bothVersionsErrors('account/report-usage-response.json', res.body)).toEqual([]);
      expect(res.body).toMatchObject({ accepted: 3 });
      expect(res.body.errors).toBeUndefined();
      const rows = await s.deployment
        .get(Database)
        .query<{ creative_id: string; build_variant_id: string; currency: string }>(
          sql`SELECT creative_id, build_variant_id, currency FROM creative_usage_reports ORDER BY id OFFSET ${before}::int`,
        );
      expect(rows).toEqual([
        { creative_id: single, build_variant_id: single, currency: 'USD' },
        { creative_id: multi[0]!, build_variant_id: multi[0]!, currency: 'EUR' },
        { creative_id: 'promoted_hero', build_variant_id: single, currency: 'USD' },
      ]);
    });

    test('unknown ids, another account and another organization are refused per record; the rest is kept', async () => {
      const s = get();
      const before = await count(s, 'creative_usage_reports');
      const usage = { account: ACCOUNT, vendor_cost: 1, currency: 'USD' };
      const res = await report(s, A, [
        { ...usage, creative_id: 'bv_unknown' },
        { ...usage, creative_id: 'promoted', build_variant_id: 'bv_unknown' },
        // Built under ACCOUNT: another account of the caller does not take it.
        { ...usage, account: OTHER_ACCOUNT, creative_id: single },
        { ...usage, creative_id: multi[1] },
      ]);
      expect(res.status).toBe(200);
      expect(bothVersionsErrors('account/report-usage-response.json', res.body)).toEqual([]);
      expect(res.body.accepted).toBe(1);
      expect(res.body.errors.map((e: any) => [e.code, e.field])).toEqual([
        ['CREATIVE_NOT_FOUND', 'usage[0].creative_id'],
        ['CREATIVE_NOT_FOUND', 'usage[1].build_variant_id'],
        ['CREATIVE_NOT_FOUND', 'usage[2].creative_id'],
      ]);
      expect(await count(s, 'creative_usage_reports')).toBe(before + 1);

      // Another organization cannot report on A's creatives, whichever way it names them.
      const other = await report(s, B, [
        { ...usage, creative_id: single },
        { ...usage, creative_id: 'promoted_hero', build_variant_id: single },
        { ...usage, account: {}, creative_id: multi[0] },
      ]);
      expect(other.status).toBe(200);
      expect(bothVersionsErrors('account/report-usage-response.json', other.body)).toEqual([]);
      expect(other.body.accepted).toBe(0);
      expect(other.body.errors.map((e: any) => [e.code, e.field])).toEqual([
        ['CREATIVE_NOT_FOUND', 'usage[0].creative_id'],
        ['CREATIVE_NOT_FOUND', 'usage[1].build_variant_id'],
        ['INVALID_REQUEST', 'usage[2].account'],
      ]);
      expect(await count(s, 'creative_usage_reports')).toBe(before + 1);
    });

    test('bad input is a 4xx naming the field, and writes nothing', async () => {
      const s = get();
      const before = await count(s, 'creative_usage_reports');
      const ok = { account: ACCOUNT, creative_id: single, vendor_cost: 1, currency: 'USD' };
      const cases: [Record<string, unknown>, string][] = [
        [{ idempotency_key: key(), reporting_period: PERIOD, usage: [] }, 'usage'],
        [{ idempotency_key: key(), reporting_period: PERIOD, usage: [ok, { ...ok, build_variant_id: '' }] }, 'usage[1].build_variant_id'],
        [{ idempotency_key: key(), reporting_period: PERIOD, usage: [ok, { ...ok, creative_id: 'x'.repeat(129) }] }, 'usage[1].creative_id'],
        [{ idempotency_key: key(), reporting_period: PERIOD, usage: [ok, { ...ok, currency: 'usd' }] }, 'usage[1].currency'],
        [{ idempotency_key: key(), reporting_period: { start: PERIOD.end, end: PERIOD.start }, usage: [ok] }, 'reporting_period.end'],
      ];
      for (const [args, field] of cases) {
        const { status, body } = await call(s, A, 'report_usage', args);
        expect({ field, status, at: body.field ?? body.error?.field }).toEqual({ field, status: 400, at: field });
        expect(schemaErrors('core/error.json', { code: body.code, message: body.message })).toEqual([]);
      }
      expect(await count(s, 'creative_usage_reports')).toBe(before);
    });
  },
);
