import { Clock, ManualClock } from '../../core/ports/clock.ts';
import type { PluginEntry } from '../../core/config.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import governance from '../../plugins/governance/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import { startServer, type TestServer } from '../support/server.ts';
import type { AdapterName } from '../support/db.ts';

export const TOKEN = 'governance-test-token-0123456789';
export const OTHER_TOKEN = 'governance-other-token-0123456789';
export const T0 = new Date('2026-03-02T00:00:00.000Z');
export const DAY = 86_400_000;

/** A plan of 10,000 USD over March 2026: CTV, online video and display in the US, at most 60% per seller, no linear TV. */
export function plan(planId: string, over: Record<string, unknown> = {}) {
  return {
    plan_id: planId,
    brand: { domain: 'acme.example' },
    objectives: 'Spring awareness',
    budget: { total: 10_000, currency: 'USD', per_seller_max_pct: 60, reallocation_unlimited: true },
    flight: { start: '2026-03-01T00:00:00Z', end: '2026-03-31T00:00:00Z' },
    channels: { allowed: ['ctv', 'olv', 'display'] },
    countries: ['US'],
    custom_policies: [{ policy_id: 'no_linear_tv', enforcement: 'must', channels: ['linear_tv'], policy: 'No linear TV for this brand' }],
    ...over,
  };
}

/** A proposed buy as a seller describes it to check_governance. */
export function proposal(planId: string, amount: number, over: Record<string, unknown> = {}) {
  return {
    plan_id: planId,
    caller: 'https://seller.example/mcp',
    tool: 'create_media_buy',
    phase: 'purchase',
    payload: { packages: [{ product_id: 'ctv_sports', budget: amount }] },
    planned_delivery: {
      total_budget: amount,
      currency: 'USD',
      channels: ['ctv'],
      geo: { countries: ['US'] },
      start_time: '2026-03-03T00:00:00Z',
      end_time: '2026-03-10T00:00:00Z',
    },
    ...over,
  };
}

export interface GovernanceServer {
  server: TestServer;
  clock: ManualClock;
}

/** A governance agent on loopback (MCP, A2A, REST) on a manual clock. */
export async function startGovernanceServer(
  adapter: AdapterName,
  schema: string,
  options: { env?: Record<string, string>; extra?: PluginEntry[] } = {},
): Promise<GovernanceServer> {
  const clock = new ManualClock(T0);
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
      governance(),
      restTasks(),
      mcpHost(),
      a2aHost(),
      ...(options.extra ?? []),
    ],
    { env: { PROTOCOL_NAMESPACE: 'adcp', ...options.env }, overrides: [[Clock, clock]] },
  );
  return { server, clock };
}
