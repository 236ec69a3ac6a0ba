import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import governance from '../../plugins/governance/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, HOSTS } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { OTHER_TOKEN, startSalesWorld, TOKEN as BUYER, type SalesWorld } from '../sales/fixture.ts';
import { governedBuy, governedPlan } from './governed-buys.ts';
import { startGovernanceServer, TOKEN as PLAN_OWNER, type GovernanceServer } from './fixture.ts';
import { loopbackResolver, TEST_CERT } from '../support/loopback.ts';
import { startTlsFront } from '../support/tls-front.ts';

// sync_governance on the seller: the governance agent a buyer syncs for an account governs that
// account's buys (the seller calls it with the synced credential); other accounts keep the
// deployment's governance (here the in-process plugin).
let n = 0;
const key = (p: string) => `${p}-${String(++n).padStart(12, '0')}`;
const R = (f: string) => `account/${f}.json`;

const plan = governedPlan;
const buy = (w: SalesWorld, accountId: string, planId: string | undefined, budget: number) => governedBuy(w, key('buy'), accountId, planId, budget);

type World = { w: SalesWorld; g: GovernanceServer; front: ReturnType<typeof startTlsFront> };

forEachDatabase<World>(
  'sync_governance',
  async (adapter, schema) => {
    const g = await startGovernanceServer(adapter, `${schema}_g`);
    const front = startTlsFront();
    front.route('governance.pub.test', g.server.base);
    const w = await startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      crawler: { resolver: loopbackResolver(['pub.test']), ca: TEST_CERT },
      extra: [governance()],
    });
    return { w, g, front };
  },
  async ({ w, g, front }) => {
    await w.close();
    await g.server.close();
    front.stop();
  },
  (get) => {
    for (const host of HOSTS) {
      test(`${host}: a synced account's buys are checked by its agent (credential sealed at rest); another account keeps the deployment's`, async () => {
        const { w, g, front } = get();
        const c = await clientFor(host, w.seller, BUYER);
        const remote = await clientFor('rest', g.server, PLAN_OWNER);
        const remotePlan = `${host}-remote-plan`;
        await remote.call('sync_plans', { idempotency_key: key('plans'), plans: [plan(remotePlan)] });
        const localPlan = `${host}-local-plan`;
        expect((await c.call('sync_plans', { idempotency_key: key('plans'), plans: [plan(localPlan)] })).ok).toBe(true);
        const accounts = (
          await c.call('sync_accounts', {
            idempotency_key: key('acc'),
            accounts: [
              { brand: { domain: `${host}.governed.example` }, operator: 'acme.example', billing: 'operator' },
              { brand: { domain: `${host}.plain.example` }, operator: 'acme.example', billing: 'operator' },
            ],
          })
        ).body.accounts.map((a: any) => a.account_id);

        const url = front.url('governance.pub.test', '/mcp');
        const request = {
          idempotency_key: key('gov'),
          accounts: [{ account: { account_id: accounts[0] }, governance_agents: [{ url, authentication: { schemes: ['Bearer'], credentials: PLAN_OWNER } }] }],
          context: { correlation_id: host },
        };
        expect(bothVersionsErrors(R('sync-governance-request'), request)).toEqual([]);
        const synced = await c.call('sync_governance', request);
        expect(synced.ok).toBe(true);
        expect(bothVersionsErrors(R('sync-governance-response'), synced.body)).toEqual([]);
        expect(synced.body.accounts).toEqual([{ account: { account_id: accounts[0] }, status: 'synced', governance_agents: [{ url }] }]);
        expect(synced.body.context).toEqual({ correlation_id: host });
        const [stored] = await w.seller.deployment
          .get(Database)
          .query<{ credentials: string }>(sql`SELECT credentials FROM account_governance_agents WHERE account_id = ${accounts[0]}::text`);
        expect(stored!.credentials).toStartWith('sealed:v1:');

        // The governed account: the remote agent's plan decides, and records the check and outcome.
        const approved = await c.call('create_media_buy', buy(w, accounts[0], remotePlan, 6000));
        expect(approved.ok).toBe(true);
        expect(approved.body.governance).toMatchObject({ plan_id: remotePlan, status: 'approved' });
        const logs = await remote.call('get_plan_audit_logs', { plan_ids: [remotePlan], include_entries: true });
        expect(logs.body.plans[0].governed_actions[0].seller_reference).toBe(approved.body.media_buy_id);
        const unknown = await c.call('create_media_buy', buy(w, accounts[0], localPlan, 6000));
        expect(unknown.body.errors[0].code).toBe('PLAN_NOT_FOUND');
        // The other account: the deployment's governance (its plans, not the remote agent's).
        const local = await c.call('create_media_buy', buy(w, accounts[1], localPlan, 6000));
        expect(local.body.governance).toMatchObject({ plan_id: localPlan, status: 'approved' });
        await c.close();
      });
    }

    test("another caller's account fails on its own entry; the caller's entry is synced", async () => {
      const { w } = get();
      const mine = await clientFor('rest', w.seller, BUYER);
      const theirs = await clientFor('rest', w.seller, OTHER_TOKEN);
      const other = (
        await theirs.call('sync_accounts', {
          idempotency_key: key('acc'),
          accounts: [{ brand: { domain: 'theirs.example' }, operator: 'acme.example', billing: 'operator' }],
        })
      ).body.accounts[0].account_id;
      const own = (
        await mine.call('sync_accounts', {
          idempotency_key: key('acc'),
          accounts: [{ brand: { domain: 'mine.example' }, operator: 'acme.example', billing: 'operator' }],
        })
      ).body.accounts[0].account_id;
      const agent = { url: 'https://governance.pub.test/mcp', authentication: { schemes: ['Bearer'], credentials: PLAN_OWNER } };
      const r = await mine.call('sync_governance', {
        idempotency_key: key('gov'),
        accounts: [
          { account: { account_id: other }, governance_agents: [agent] },
          { account: { account_id: own }, governance_agents: [agent] },
        ],
      });
      expect(bothVersionsErrors(R('sync-governance-response'), r.body)).toEqual([]);
      expect(r.body.accounts.map((a: any) => [a.status, a.errors?.[0]?.code])).toEqual([
        ['failed', 'ACCOUNT_NOT_FOUND'],
        ['synced', undefined],
      ]);
      const rows = await w.seller.deployment
        .get(Database)
        .query<{ account_id: string }>(sql`SELECT account_id FROM account_governance_agents WHERE account_id = ${other}::text`);
      expect(rows).toEqual([]);
    });

    test('bad input: 400 naming the field, nothing written', async () => {
      const { w } = get();
      const db = w.seller.deployment.get(Database);
      const before = (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM account_governance_agents`))[0]!.n;
      const account = { brand: { domain: 'bad.example' }, operator: 'acme.example' };
      const ok = { url: 'https://governance.pub.test/mcp', authentication: { schemes: ['Bearer'], credentials: PLAN_OWNER } };
      const cases: [unknown, string][] = [
        [[{ account, governance_agents: [{ ...ok, url: 'http://governance.pub.test/mcp' }] }], 'accounts[0].governance_agents[0].url'],
        [
          [{ account, governance_agents: [{ ...ok, authentication: { schemes: ['Bearer'], credentials: 'short' } }] }],
          'accounts[0].governance_agents[0].authentication.credentials',
        ],
        [[{ account, governance_agents: [ok, ok] }], 'accounts[0].governance_agents'],
        [[], 'accounts'],
      ];
      for (const [accounts, field] of cases) {
        const r = await w.seller.fetch('/tasks/sync_governance', { method: 'POST', token: BUYER, json: { idempotency_key: key('gov'), accounts } });
        expect(r.status).toBe(400);
        const body = (await r.json()) as any;
        expect(body.errors[0]).toMatchObject({ code: 'INVALID_REQUEST' });
        expect(body.errors[0].field).toBe(field);
      }
      expect((await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM account_governance_agents`))[0]!.n).toBe(before);
    });
  },
);
