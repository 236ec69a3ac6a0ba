import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import governance from '../../plugins/governance/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, HOSTS } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { startSalesWorld, TOKEN as BUYER, type SalesWorld } from '../sales/fixture.ts';
import { governedBuy, governedPlan } from './governed-buys.ts';
import { startGovernanceServer, TOKEN as PLAN_OWNER, type GovernanceServer } from './fixture.ts';
import { loopbackResolver, TEST_CERT } from '../support/loopback.ts';
import { startTlsFront } from '../support/tls-front.ts';

let n = 0;
const key = (p: string) => `${p}-${String(++n).padStart(12, '0')}`;

const SALES_TABLES = ['sales_media_buys', 'sales_packages', 'sales_buy_history', 'adsim_orders', 'adsim_lines'];
async function counts(db: ReturnType<SalesWorld['seller']['deployment']['get']>) {
  return Promise.all(SALES_TABLES.map(async (t) => (await (db as any).query(sql`SELECT count(*)::int AS n FROM ${sql.raw(t)}`))[0].n as number));
}

const plan = governedPlan;
const buy = (w: SalesWorld, accountId: string, planId: string | undefined, budget: number) => governedBuy(w, key('buy'), accountId, planId, budget);

forEachDatabase<SalesWorld>(
  'sales with governance in the same deployment',
  (adapter, schema) => startSalesWorld(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' }, extra: [governance()] }),
  (w) => w.close(),
  (get) => {
    for (const host of HOSTS) {
      test(`${host}: approved, approved with conditions (attached to the buy), denied (GOVERNANCE_DENIED, nothing written); the audit log has every decision`, async () => {
        const w = get();
        const c = await clientFor(host, w.seller, BUYER);
        const planId = `${host}-launch`;
        expect((await c.call('sync_plans', { idempotency_key: key('plans'), plans: [plan(planId)] })).ok).toBe(true);
        const account = (
          await c.call('sync_accounts', {
            idempotency_key: key('acc'),
            accounts: [{ brand: { domain: `${host}.acme.example` }, operator: 'acme.example', billing: 'operator' }],
          })
        ).body.accounts[0].account_id;

        const approved = await c.call('create_media_buy', buy(w, account, planId, 6000));
        expect(approved.ok).toBe(true);
        expect(bothVersionsErrors('media-buy/create-media-buy-response.json', approved.body)).toEqual([]);
        expect(approved.body.governance).toMatchObject({ plan_id: planId, status: 'approved' });
        expect(approved.body.governance.conditions).toBeUndefined();

        const conditional = await c.call('create_media_buy', buy(w, account, planId, 9000));
        expect(conditional.ok).toBe(true);
        expect(bothVersionsErrors('media-buy/create-media-buy-response.json', conditional.body)).toEqual([]);
        expect(conditional.body.governance).toMatchObject({ status: 'conditions', conditions: [{ field: 'total_budget', required_value: 8000 }] });
        const listed = await c.call('get_media_buys', { media_buy_ids: [conditional.body.media_buy_id] });
        expect(bothVersionsErrors('media-buy/get-media-buys-response.json', listed.body)).toEqual([]);
        expect(listed.body.media_buys[0].governance).toEqual(conditional.body.governance);

        // 5,000 left: a 6,000 buy is denied before anything is written.
        const db = w.seller.deployment.get(Database);
        const before = await counts(db);
        const denied = await c.call('create_media_buy', buy(w, account, planId, 6000));
        expect({ ok: denied.ok, code: denied.body.code, field: denied.body.field }).toEqual({ ok: false, code: 'GOVERNANCE_DENIED', field: 'plan_id' });
        expect(denied.body.errors[0].details.findings[0]).toMatchObject({ category_id: 'budget_authority', severity: 'critical' });
        expect(bothVersionsErrors('media-buy/create-media-buy-response.json', denied.body)).toEqual([]);
        expect(await counts(db)).toEqual(before);

        const logs = await c.call('get_plan_audit_logs', { plan_ids: [planId], include_entries: true });
        expect(bothVersionsErrors('governance/get-plan-audit-logs-response.json', logs.body)).toEqual([]);
        expect(logs.body.plans[0]).toMatchObject({
          budget: { committed: 15_000, remaining: 5000 },
          summary: { checks_performed: 3, outcomes_reported: 2, statuses: { approved: 1, conditions: 1, denied: 1 } },
        });
        expect(logs.body.plans[0].governed_actions.map((a: any) => a.seller_reference).filter(Boolean)).toEqual([
          approved.body.media_buy_id,
          conditional.body.media_buy_id,
        ]);
        // A buy without a plan is not governed (this seller does not require one).
        expect((await c.call('create_media_buy', buy(w, account, undefined, 5000))).body.governance).toBeUndefined();
        await c.close();
      });
    }
  },
);

// The remote agent answers over https with a verified name (a TLS front on loopback), as it would in production.
forEachDatabase<{ w: SalesWorld; g: GovernanceServer; front: ReturnType<typeof startTlsFront> }>(
  'sales consulting a remote governance agent over MCP',
  async (adapter, schema) => {
    const g = await startGovernanceServer(adapter, `${schema}_g`);
    const front = startTlsFront();
    front.route('governance.pub.test', g.server.base);
    const w = await startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      crawler: { resolver: loopbackResolver(['pub.test']), ca: TEST_CERT },
      sales: { governance: { agentUrl: front.url('governance.pub.test', '/mcp'), token: PLAN_OWNER, required: true } },
    });
    return { w, g, front };
  },
  async ({ w, g, front }) => {
    await w.close();
    await g.server.close();
    front.stop();
  },
  (get) => {
    test('plan_id required; approved with the check and outcome recorded remotely; denied and unknown plans refused; an unreachable agent is GOVERNANCE_UNAVAILABLE', async () => {
      const { w, g } = get();
      const owner = await clientFor('rest', g.server, PLAN_OWNER);
      await owner.call('sync_plans', { idempotency_key: key('plans'), plans: [plan('remote-launch')] });
      const c = await clientFor('mcp', w.seller, BUYER);
      const account = (
        await c.call('sync_accounts', {
          idempotency_key: key('acc'),
          accounts: [{ brand: { domain: 'remote.acme.example' }, operator: 'acme.example', billing: 'operator' }],
        })
      ).body.accounts[0].account_id;

      const missing = await c.call('create_media_buy', buy(w, account, undefined, 6000));
      expect({ code: missing.body.code, field: missing.body.field }).toEqual({ code: 'INVALID_REQUEST', field: 'plan_id' });

      const approved = await c.call('create_media_buy', buy(w, account, 'remote-launch', 6000));
      expect(approved.ok).toBe(true);
      expect(approved.body.governance).toMatchObject({ plan_id: 'remote-launch', status: 'approved' });
      const logs = await owner.call('get_plan_audit_logs', { plan_ids: ['remote-launch'], include_entries: true });
      expect(logs.body.plans[0].budget.committed).toBe(6000);
      expect(logs.body.plans[0].entries[0]).toMatchObject({
        type: 'check',
        caller: w.seller.deployment.config.server.publicUrl ?? expect.stringMatching(/^http:\/\/localhost:/),
        tool: 'create_media_buy',
      });
      expect(logs.body.plans[0].governed_actions[0].seller_reference).toBe(approved.body.media_buy_id);

      const denied = await c.call('create_media_buy', buy(w, account, 'remote-launch', 15_000));
      expect({ code: denied.body.code, field: denied.body.field }).toEqual({ code: 'GOVERNANCE_DENIED', field: 'plan_id' });
      const unknown = await c.call('create_media_buy', buy(w, account, 'no-such-plan', 6000));
      expect({ code: unknown.body.code, field: unknown.body.field }).toEqual({ code: 'PLAN_NOT_FOUND', field: 'plan_id' });

      get().front.route('governance.pub.test', () => new Response('maintenance', { status: 503, headers: { 'content-type': 'text/plain' } }));
      const down = await c.call('create_media_buy', buy(w, account, 'remote-launch', 6000));
      expect({ code: down.body.code, recovery: down.body.errors[0].recovery }).toEqual({ code: 'GOVERNANCE_UNAVAILABLE', recovery: 'transient' });
      await c.close();
    });
  },
);
