import { expect, test } from 'bun:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { adcpRequestSchema } from '../../lib/adcp/request-schemas.ts';
import { governedPayload } from '../../plugins/brand-rights/governance.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { Database } from '../../core/ports/database.ts';
import { sql } from '../../core/sql.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import governance from '../../plugins/governance/index.ts';
import brandRights, { SANDBOX_RIGHTS } from '../../plugins/brand-rights/index.ts';
import salesAccounts from '../../plugins/sales-accounts/index.ts';
import testController from '../../plugins/test-controller/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, HOSTS, restClient } from '../support/agent.ts';
import { bothVersionsErrors, schemaErrors } from '../support/schemas.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { tableFingerprint } from '../support/rows.ts';
import { deliverWebhooks, startSink } from '../interop/support.ts';

// Brand rights on the brand agent over the three hosts: get_rights, acquire_rights, update_rights,
// creative_approval, sync_governance and revocation webhooks; every answer valid against 3.1.19 and
// 3.0.6 (where it defines the task), refusals write nothing, another organization's grants are not found.
const TOKEN = 'brand-rights-test-token-0123456789';
const OTHER_TOKEN = 'brand-rights-other-token-0123456789';
const T0 = new Date('2026-03-02T00:00:00.000Z');
const POLL_MS = 500;
const ACME = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' };
const B = (f: string) => `brand/${f}.json`;
const ROSTER = [
  { domain: 'acme-outdoor.example', brand_id: 'acme_outdoor' },
  { domain: 'nimbus-cola.example', brand_id: 'nimbus_cola' },
];

interface World {
  server: TestServer;
  clock: ManualClock;
  timers: ManualTimers;
  schema: string;
  sink: ReturnType<typeof startSink>;
}

let n = 0;
const key = () => `rights-test-${String(++n).padStart(12, '0')}-${crypto.randomUUID().slice(0, 8)}`;

const acquire = (over: Record<string, unknown> = {}) => ({
  account: ACME,
  rights_id: 'rights_acme_outdoor_ai_imagery',
  pricing_option_id: 'acme_ai_quarterly_flat',
  buyer: { domain: 'pinnacle-agency.example' },
  campaign: {
    description: 'AI-generated display ads for the summer trail gear campaign',
    uses: ['likeness', 'commercial'],
    start_date: '2026-04-01',
    end_date: '2026-06-30',
  },
  revocation_webhook: { url: 'https://pinnacle-agency.example/webhooks/revocation' },
  idempotency_key: key(),
  ...over,
});

/**
 * acquire_rights and creative_approval answers: 3.1.19 in full; 3.0.6 as its clients read the payload. 3.0.6 names
 * the rights (approval) status `status`, the member 3.1 reserves for the task envelope (status: completed)
 * and renamed `rights_status` (`approval_status`): one body cannot hold both, so the 3.0.6 check maps it back.
 */
function statusTaskErrors(file: string, body: Record<string, any>): string[] {
  const { status: _envelope, ...payload } = body;
  const domain = payload.rights_status ?? payload.approval_status;
  return [...schemaErrors(file, body, '3.1.19'), ...schemaErrors(file, domain ? { ...payload, status: domain } : payload, '3.0.6')];
}

const fingerprint = (w: World) => tableFingerprint(w.server.deployment.get(Database), w.schema);

forEachDatabase<World>(
  'brand rights',
  async (adapter, schema) => {
    const clock = new ManualClock(T0);
    const timers = new ManualTimers();
    const server = await startServer(
      adapter,
      schema,
      [
        auth({
          testTokens: [
            { token: TOKEN, name: 'buyer' },
            { token: OTHER_TOKEN, name: 'other buyer' },
          ],
        }),
        tasks({ worker: false }),
        idempotency(),
        testController({ enabled: true }),
        governance(),
        rateLimit(),
        registryBrands(),
        // The buyer accounts (and their sync_governance record) of this deployment's seller.
        salesAccounts(),
        brandRights({ brands: ROSTER, rights: SANDBOX_RIGHTS, approvalDelaySeconds: 60 }),
        signerKeyring(),
        crawlerHttp(),
        webhooks({ outbox: { pollMs: POLL_MS } }),
        restTasks(),
        mcpHost(),
        a2aHost(),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp', DEV_LOOPBACK_WEBHOOKS: 'true' }, overrides: [[Clock, clock]], timers },
    );
    // The roster's identities in the registry: the test agent's sandbox brand.json documents.
    const documents = JSON.parse(readFileSync(join(import.meta.dir, '../../plugins/test-agent/sandbox-brands.json'), 'utf8'));
    const records = server.deployment.get(BrandJsonRecords);
    for (const { domain } of ROSTER) await server.deployment.get(Database).transaction((tx) => records.record(tx, domain, documents[domain]));
    return { server, clock, timers, schema, sink: startSink() };
  },
  async (w) => {
    w.sink.stop();
    await w.server.close();
  },
  (get) => {
    for (const host of HOSTS) {
      test(`${host}: get_rights, acquire_rights, update_rights and creative_approval (answers valid in both versions)`, async () => {
        const c = await clientFor(host, get().server, TOKEN);
        const ask = { query: 'image generation rights for advertising', uses: ['ai_generated_image'], context: { correlation_id: `rights-${host}` } };
        expect(bothVersionsErrors(B('get-rights-request'), ask)).toEqual([]);
        const rights = await c.call('get_rights', ask);
        expect(rights.ok).toBe(true);
        expect(bothVersionsErrors(B('get-rights-response'), rights.body)).toEqual([]);
        expect(rights.body.context).toEqual({ correlation_id: `rights-${host}` });
        expect(rights.body.rights[0]).toMatchObject({ rights_id: 'rights_acme_outdoor_ai_imagery', brand_id: 'acme_outdoor', match_score: 1 });
        // Best match first: the talent right covers both requested uses, the imagery one only one.
        const talent = await c.call('get_rights', { query: 'endorsement', uses: ['commercial', 'endorsement'] });
        expect(talent.body.rights.map((r: any) => r.rights_id).slice(0, 2)).toEqual(['rights_acme_outdoor_ambassador', 'rights_acme_outdoor_ai_imagery']);
        const scoped = await c.call('get_rights', { query: 'music', uses: ['commercial'], brand_id: 'nimbus_cola' });
        expect(scoped.body.rights.map((r: any) => r.rights_id)).toEqual(['rights_nimbus_cola_jingle']);

        const request = acquire({ context: { correlation_id: `acquire-${host}` } });
        expect(bothVersionsErrors(B('acquire-rights-request'), request)).toEqual([]);
        const acquired = await c.call('acquire_rights', request);
        expect(acquired.ok).toBe(true);
        expect(statusTaskErrors(B('acquire-rights-response'), acquired.body)).toEqual([]);
        expect(acquired.body).toMatchObject({
          rights_status: 'acquired',
          brand_id: 'acme_outdoor',
          terms: { pricing_option_id: 'acme_ai_quarterly_flat', amount: 45, currency: 'USD', uses: ['likeness', 'commercial'], end_date: '2026-06-30' },
          rights_constraint: { uses: ['likeness', 'commercial'], valid_until: '2026-06-30T23:59:59Z', right_type: 'brand_ip' },
          context: { correlation_id: `acquire-${host}` },
        });
        const grantId = acquired.body.rights_id as string;
        expect(grantId).toMatch(/^grant_/);
        expect(acquired.body.generation_credentials[0].rights_key).toMatch(/^rk_/);
        // A replay answers the same grant and writes nothing more.
        const replay = await c.call('acquire_rights', request);
        expect(replay.body.rights_id).toBe(grantId);

        const update = {
          rights_id: grantId,
          account: ACME,
          end_date: '2026-09-30',
          pricing_option_id: 'acme_ai_quarterly_flat',
          paused: true,
          idempotency_key: key(),
        };
        expect(bothVersionsErrors(B('update-rights-request'), update)).toEqual([]);
        const updated = await c.call('update_rights', update);
        expect(updated.ok).toBe(true);
        expect(bothVersionsErrors(B('update-rights-response'), updated.body)).toEqual([]);
        expect(updated.body).toMatchObject({ rights_id: grantId, paused: true, terms: { end_date: '2026-09-30' } });

        const submit = { rights_id: grantId, creative_url: `https://cdn.pinnacle-agency.example/${host}.png`, idempotency_key: key() };
        expect(bothVersionsErrors(B('creative-approval-request'), submit)).toEqual([]);
        const paused = await c.call('creative_approval', submit);
        expect(statusTaskErrors(B('creative-approval-response'), paused.body)).toEqual([]);
        expect(paused.body).toMatchObject({ approval_status: 'rejected', rights_id: grantId });
        await c.call('update_rights', { rights_id: grantId, paused: false, idempotency_key: key() });
        const approved = await c.call('creative_approval', { ...submit, idempotency_key: key() });
        expect(statusTaskErrors(B('creative-approval-response'), approved.body)).toEqual([]);
        expect(approved.body).toMatchObject({ approval_status: 'approved', rights_id: grantId, approved_at: T0.toISOString() });
        expect(approved.body.conditions).toContain('No competitor products in frame');
        await c.close();
      });
    }

    test('search_brands finds roster brands by their registry identity, with a rights summary; bad input is a 400', async () => {
      const c = restClient(get().server, TOKEN);
      const all = await c.call('search_brands', { query: 'brands', context: { correlation_id: 'search' } });
      expect(all.ok).toBe(true);
      expect(bothVersionsErrors(B('search-brands-response'), all.body)).toEqual([]);
      expect(all.body.brands.map((b: any) => b.brand_id)).toEqual(['acme_outdoor', 'nimbus_cola']);
      expect(all.body.context).toEqual({ correlation_id: 'search' });
      const drink = await c.call('search_brands', { query: 'a sparkling soft drink' });
      expect(bothVersionsErrors(B('search-brands-response'), drink.body)).toEqual([]);
      expect(drink.body.brands).toHaveLength(1);
      expect(drink.body.brands[0]).toMatchObject({
        brand_id: 'nimbus_cola',
        house: { domain: 'nimbus-cola.example', name: 'Nimbus Beverages (sandbox)' },
        rights: { available_uses: ['sync', 'background_music', 'commercial'] },
      });
      const inCanada = await c.call('search_brands', { query: 'gear', countries: ['CA'], industries: ['retail'] });
      expect(inCanada.body.brands.map((b: any) => b.brand_id)).toEqual(['acme_outdoor']);
      expect(inCanada.body.brands[0].rights.countries).toEqual(['US', 'CA']);
      const page = await c.call('search_brands', { query: 'brands', pagination: { max_results: 1 } });
      expect(page.body.pagination).toEqual({ has_more: true, total_count: 2, cursor: 'o1' });
      const next = await c.call('search_brands', { query: 'brands', pagination: { max_results: 1, cursor: 'o1' } });
      expect(next.body.brands.map((b: any) => b.brand_id)).toEqual(['nimbus_cola']);
      for (const bad of [{}, { query: 'x', countries: [] }, { query: 'x', pagination: { cursor: 'bogus' } }]) {
        const r = await c.call('search_brands', bad);
        expect(r.ok).toBe(false);
        expect(r.body.errors[0].code).toBe('INVALID_REQUEST');
        expect(bothVersionsErrors(B('search-brands-response'), r.body)).toEqual([]);
      }
    });

    test('acquire_rights refuses bad input, past dates and unknown references with a 4xx, writing nothing', async () => {
      const w = get();
      const c = restClient(w.server, TOKEN);
      const before = await fingerprint(w);
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [acquire({ campaign: undefined }), 'INVALID_REQUEST', 'campaign'],
        [acquire({ campaign: { description: 'x', uses: ['telepathy'] } }), 'INVALID_REQUEST', 'campaign.uses'],
        [acquire({ revocation_webhook: { url: 'ftp://x.example/hook' } }), 'INVALID_REQUEST', 'revocation_webhook'],
        [acquire({ rights_id: 'rights_nope' }), 'REFERENCE_NOT_FOUND', 'rights_id'],
        [acquire({ pricing_option_id: 'nope' }), 'REFERENCE_NOT_FOUND', 'pricing_option_id'],
        [
          acquire({ campaign: { description: 'Expired', uses: ['commercial'], start_date: '2024-01-01', end_date: '2024-03-31' } }),
          'INVALID_REQUEST',
          'campaign.end_date',
        ],
        [
          acquire({ campaign: { description: 'Reversed', uses: ['commercial'], start_date: '2026-06-01', end_date: '2026-05-01' } }),
          'INVALID_REQUEST',
          'campaign.end_date',
        ],
        [acquire({ account: { account_id: 'acc_not_mine' } }), 'ACCOUNT_NOT_FOUND', 'account'],
      ];
      for (const [args, code, field] of cases) {
        const r = await c.call('acquire_rights', args);
        expect(r.ok).toBe(false);
        expect(r.body.errors?.[0] ?? r.body).toMatchObject({ code });
        expect(String(r.body.errors?.[0]?.field ?? r.body.field ?? '')).toStartWith(field);
        expect(statusTaskErrors(B('acquire-rights-response'), r.body)).toEqual([]);
      }
      for (const bad of [{ query: 'x' }, { query: 'x', uses: [] }, { query: 'x', uses: ['commercial'], countries: ['usa'] }]) {
        const r = await c.call('get_rights', bad);
        expect(r.ok).toBe(false);
        expect(r.body.errors[0].code).toBe('INVALID_REQUEST');
      }
      expect(await fingerprint(w)).toEqual(before);
      // Uses the option does not license: a `rejected` answer, no grant.
      const rejected = await c.call('acquire_rights', acquire({ pricing_option_id: 'acme_ai_cpm', campaign: { description: 'Likeness', uses: ['likeness'] } }));
      expect(statusTaskErrors(B('acquire-rights-response'), rejected.body)).toEqual([]);
      expect(rejected.body).toMatchObject({ rights_status: 'rejected', rights_id: 'rights_acme_outdoor_ai_imagery' });
    });

    test("another organization's grants and accounts are not found, for every task", async () => {
      const w = get();
      const mine = restClient(w.server, TOKEN);
      const other = restClient(w.server, OTHER_TOKEN);
      const grant = (await mine.call('acquire_rights', acquire())).body.rights_id as string;
      const before = await fingerprint(w);
      const update = await other.call('update_rights', { rights_id: grant, paused: true, idempotency_key: key() });
      expect(update.body.errors[0]).toMatchObject({ code: 'REFERENCE_NOT_FOUND', field: 'rights_id' });
      expect(bothVersionsErrors(B('update-rights-response'), update.body)).toEqual([]);
      const approval = await other.call('creative_approval', { rights_id: grant, creative_url: 'https://x.example/a.png', idempotency_key: key() });
      expect(approval.body.errors[0]).toMatchObject({ code: 'REFERENCE_NOT_FOUND' });
      const revoke = await other.call('comply_test_controller', { scenario: 'force_rights_revoked', params: { rights_id: grant } });
      expect(revoke.body).toMatchObject({ success: false, error: 'NOT_FOUND' });
      // Naming the owner's account by id does not reach it either.
      const rows = await w.server.deployment
        .get(Database)
        .query<{ account_id: string }>(sql`SELECT account_id FROM brand_rights_accounts ORDER BY created_at LIMIT 1`);
      const accountId = rows[0]!.account_id;
      const foreign = await other.call('acquire_rights', acquire({ account: { account_id: accountId } }));
      expect(foreign.body.errors[0]).toMatchObject({ code: 'ACCOUNT_NOT_FOUND' });
      const wrongAccount = await mine.call('update_rights', {
        rights_id: grant,
        account: { brand: { domain: 'other.example' }, operator: 'pinnacle-agency.example' },
        paused: true,
        idempotency_key: key(),
      });
      expect(wrongAccount.body.errors[0]).toMatchObject({ code: 'REFERENCE_NOT_FOUND' });
      const sync = await other.call('sync_governance', {
        accounts: [
          {
            account: { account_id: accountId },
            governance_agents: [{ url: 'https://gov.example/mcp', authentication: { schemes: ['Bearer'], credentials: 'x'.repeat(32) } }],
          },
        ],
        idempotency_key: key(),
      });
      expect(bothVersionsErrors('account/sync-governance-response.json', sync.body)).toEqual([]);
      expect(sync.body.accounts[0]).toMatchObject({ status: 'failed' });
      // get_rights names no account: the catalog is the same for every caller.
      expect((await other.call('get_rights', { query: 'x', uses: ['commercial'] })).body.rights.length).toBeGreaterThan(0);
      // Nothing of the brand agent's changed (the answered sync_governance keeps its idempotency record).
      const after = await fingerprint(w);
      for (const table of ['brand_rights_accounts', 'brand_rights_grants', 'brand_rights_approvals', 'webhook_outbox'])
        expect(after[table]).toBe(before[table]!);
    });

    test('a governed account asks governance first: over the plan is GOVERNANCE_DENIED with findings and writes nothing', async () => {
      const w = get();
      const c = restClient(w.server, TOKEN);
      const account = { brand: { domain: 'governed.example' }, operator: 'pinnacle-agency.example' };
      const plan = await c.call('sync_plans', {
        plans: [
          {
            plan_id: 'rights-plan-50',
            brand: { domain: 'governed.example' },
            objectives: 'Restricted plan: rights licensing',
            budget: { total: 50, currency: 'USD', reallocation_threshold: 25 },
            flight: { start: '2026-04-01T00:00:00Z', end: '2026-06-30T23:59:59Z' },
            countries: ['US'],
          },
        ],
        idempotency_key: key(),
      });
      expect(plan.ok).toBe(true);
      // The account as the seller keeps it, then its governance agent (sync_governance belongs to the seller's accounts).
      const synced = await c.call('sync_accounts', { accounts: [{ ...account, billing: 'operator' }], idempotency_key: key() });
      expect(synced.body.accounts[0].action).toBe('created');
      const sync = await c.call('sync_governance', {
        accounts: [
          {
            account,
            governance_agents: [
              { url: 'https://governance.pinnacle-agency.example/mcp', authentication: { schemes: ['Bearer'], credentials: 'g'.repeat(40) } },
            ],
          },
        ],
        idempotency_key: key(),
      });
      expect(bothVersionsErrors('account/sync-governance-response.json', sync.body)).toEqual([]);
      expect(sync.body.accounts[0]).toEqual({ account, status: 'synced', governance_agents: [{ url: 'https://governance.pinnacle-agency.example/mcp' }] });
      expect(JSON.stringify(sync.body)).not.toContain('gggg');

      const before = await fingerprint(w);
      const noPlan = await c.call('acquire_rights', acquire({ account }));
      expect(noPlan.body.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'plan_id' });
      const cpm = await c.call(
        'acquire_rights',
        acquire({ account, plan_id: 'rights-plan-50', pricing_option_id: 'acme_ai_cpm', campaign: { description: 'CPM', uses: ['commercial'] } }),
      );
      expect(cpm.body.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'campaign.estimated_impressions' });
      const denied = await c.call('acquire_rights', {
        ...acquire({
          account,
          plan_id: 'rights-plan-50',
          rights_id: 'rights_acme_outdoor_ambassador',
          pricing_option_id: 'acme_ambassador_quarterly',
          revocation_webhook: {
            url: 'https://pinnacle-agency.example/hook',
            authentication: { schemes: ['Bearer'], credentials: 'pinnacle-revocation-secret-0123456789abcdef' },
          },
        }),
        context: { correlation_id: 'denied' },
      });
      expect(denied.ok).toBe(false);
      expect(denied.body.errors[0]).toMatchObject({ code: 'GOVERNANCE_DENIED' });
      expect(denied.body.errors[0].details.findings.length).toBeGreaterThan(0);
      expect(denied.body.context).toEqual({ correlation_id: 'denied' });
      expect(statusTaskErrors(B('acquire-rights-response'), denied.body)).toEqual([]);
      // Governance records its decision (its own table); nothing of the brand agent's changed.
      const after = await fingerprint(w);
      for (const table of ['brand_rights_accounts', 'brand_rights_grants', 'brand_rights_approvals']) expect(after[table]).toBe(before[table]!);

      const within = await c.call('acquire_rights', acquire({ account, plan_id: 'rights-plan-50' }));
      expect(within.body).toMatchObject({ rights_status: 'acquired', terms: { amount: 45 } });
      expect(statusTaskErrors(B('acquire-rights-response'), within.body)).toEqual([]);
      // A dearer option is a modification-phase check of the added cost (105 USD): denied, the grant unchanged.
      const grant = within.body.rights_id as string;
      const beforeUpdate = await fingerprint(w);
      const dearer = await c.call('update_rights', { rights_id: grant, pricing_option_id: 'acme_ai_annual_flat', idempotency_key: key() });
      expect(dearer.body.errors[0]).toMatchObject({ code: 'GOVERNANCE_DENIED' });
      expect(bothVersionsErrors(B('update-rights-response'), dearer.body)).toEqual([]);
      const afterUpdate = await fingerprint(w);
      for (const table of ['brand_rights_accounts', 'brand_rights_grants']) expect(afterUpdate[table]).toBe(beforeUpdate[table]!);
      // What adds no cost is not asked: pausing and extending a flat-rate grant.
      const paused = await c.call('update_rights', { rights_id: grant, paused: true, end_date: '2026-07-31', idempotency_key: key() });
      expect(paused.body).toMatchObject({ rights_id: grant, paused: true, terms: { end_date: '2026-07-31', amount: 45 } });
      const shorter = await c.call('update_rights', { rights_id: grant, end_date: '2026-05-01', idempotency_key: key() });
      expect(shorter.body.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'end_date' });
    });

    test('a right that needs the holder approval is acquired asynchronously: submitted (pending_approval), then completed with the grant', async () => {
      const w = get();
      const c = restClient(w.server, TOKEN);
      const request = acquire({
        rights_id: 'rights_acme_outdoor_ambassador',
        pricing_option_id: 'acme_ambassador_quarterly',
        campaign: { description: 'Ambassador spots', uses: ['endorsement', 'likeness'], start_date: '2026-04-01', end_date: '2026-06-30' },
        context: { correlation_id: 'async' },
      });
      const submitted = await c.call('acquire_rights', request);
      expect(submitted.ok).toBe(true);
      expect(submitted.body).toMatchObject({
        status: 'submitted',
        rights_status: 'pending_approval',
        brand_id: 'acme_outdoor',
        context: { correlation_id: 'async' },
      });
      expect(statusTaskErrors(B('acquire-rights-response'), submitted.body)).toEqual([]);
      const grant = submitted.body.rights_id as string;
      const early = await c.call('creative_approval', { rights_id: grant, creative_url: 'https://cdn.example/early.png', idempotency_key: key() });
      expect(early.body).toMatchObject({ approval_status: 'rejected' });
      const change = await c.call('update_rights', { rights_id: grant, paused: true, idempotency_key: key() });
      expect(change.body.errors[0]).toMatchObject({ code: 'INVALID_STATE' });
      expect((await c.poll(submitted.body.task_id)).status).toBe('submitted');
      w.clock.advance(61_000);
      await w.server.deployment.get(TaskStore).runDue();
      const done = await c.poll(submitted.body.task_id);
      expect(done.status).toBe('completed');
      expect(done.result).toMatchObject({
        rights_id: grant,
        rights_status: 'acquired',
        terms: { pricing_option_id: 'acme_ambassador_quarterly', amount: 2500 },
      });
      expect(statusTaskErrors(B('acquire-rights-response'), { status: 'completed', ...done.result })).toEqual([]);
      const review = await c.call('creative_approval', { rights_id: grant, creative_url: 'https://cdn.example/spot.mp4', idempotency_key: key() });
      expect(statusTaskErrors(B('creative-approval-response'), review.body)).toEqual([]);
      expect(review.body).toMatchObject({ approval_status: 'pending_review', rights_id: grant });
    });

    test('a revocation is pushed to the revocation_webhook (signed, valid) and the grant can no longer change or approve', async () => {
      const w = get();
      const c = restClient(w.server, TOKEN);
      const production = (await c.call('acquire_rights', acquire())).body.rights_id as string;
      const refused = await c.call('comply_test_controller', { scenario: 'force_rights_revoked', params: { rights_id: production } });
      expect(refused.body).toMatchObject({ success: false, error: 'FORBIDDEN' });
      const sandbox = { ...ACME, sandbox: true };
      const grant = (await c.call('acquire_rights', acquire({ account: sandbox, revocation_webhook: { url: w.sink.url('/revoked') } }))).body
        .rights_id as string;
      const revoked = await c.call('comply_test_controller', {
        scenario: 'force_rights_revoked',
        params: { rights_id: grant, reason: 'Talent contract ended', revoked_uses: ['likeness'] },
      });
      expect(revoked.body).toMatchObject({ success: true, previous_state: 'acquired', current_state: 'revoked' });
      await deliverWebhooks(w.server, w.timers, POLL_MS);
      const got = w.sink.received.filter((r) => r.path === '/revoked');
      expect(got).toHaveLength(1);
      expect(bothVersionsErrors(B('revocation-notification'), got[0]!.body)).toEqual([]);
      expect(got[0]!.body).toMatchObject({
        rights_id: grant,
        brand_id: 'acme_outdoor',
        reason: 'Talent contract ended',
        revoked_uses: ['likeness'],
        effective_at: w.clock.now().toISOString(),
      });
      expect(got[0]!.headers.get('signature-input')).toBeTruthy();
      const update = await c.call('update_rights', { rights_id: grant, end_date: '2026-12-31', idempotency_key: key() });
      expect(update.body.errors[0]).toMatchObject({ code: 'INVALID_STATE' });
      const approval = await c.call('creative_approval', { rights_id: grant, creative_url: 'https://cdn.example/r.png', idempotency_key: key() });
      expect(approval.body).toMatchObject({ approval_status: 'rejected' });
      expect(approval.body.reason).toContain('Talent contract ended');
      const again = await c.call('comply_test_controller', { scenario: 'force_rights_revoked', params: { rights_id: grant } });
      expect(again.body).toMatchObject({ success: false, error: 'INVALID_TRANSITION' });
    });
  },
);

test('the vendored request schemas the rights tools publish judge requests as the published 3.1.19 ones do', () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const samples: Record<string, unknown[]> = {
    'brand/get-rights-request.json': [{ query: 'x', uses: ['commercial'] }, { query: 'x', uses: [] }, { uses: ['commercial'] }],
    'brand/acquire-rights-request.json': [acquire(), acquire({ campaign: { uses: ['commercial'] } }), acquire({ revocation_webhook: undefined })],
    'brand/update-rights-request.json': [{ rights_id: 'g', idempotency_key: key(), paused: true }, { rights_id: 'g' }],
    'brand/search-brands-request.json': [{ query: 'x' }, { query: 'x', countries: [] }, {}],
    'brand/creative-approval-request.json': [{ rights_id: 'g', creative_url: 'https://x.example/a.png', idempotency_key: key() }, { rights_id: 'g' }],
    'account/sync-governance-request.json': [
      {
        idempotency_key: key(),
        accounts: [{ account: ACME, governance_agents: [{ url: 'https://g.example', authentication: { schemes: ['Bearer'], credentials: 'c'.repeat(32) } }] }],
      },
      { idempotency_key: key(), accounts: [] },
    ],
  };
  for (const [file, list] of Object.entries(samples)) {
    const validate = ajv.compile(adcpRequestSchema(file));
    for (const sample of list) {
      const clean = JSON.parse(JSON.stringify(sample));
      expect({ file, ok: validate(clean) }).toEqual({ file, ok: schemaErrors(file, clean).length === 0 });
    }
  }
});

test("the governance agent is shown the request without the buyer's webhook credentials", () => {
  const request = acquire({
    revocation_webhook: {
      url: 'https://pinnacle-agency.example/hook',
      authentication: { schemes: ['Bearer'], credentials: 'pinnacle-revocation-secret-0123456789abcdef' },
    },
    push_notification_config: { url: 'https://pinnacle-agency.example/push', token: 'push-token-0123456789' },
  });
  const shown = governedPayload(request);
  expect(shown.revocation_webhook).toEqual({ url: 'https://pinnacle-agency.example/hook' });
  expect(JSON.stringify(shown)).not.toContain('secret');
  expect(JSON.stringify(shown)).not.toContain('push-token');
  expect(shown.campaign).toEqual(request.campaign);
});
