import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import testController from '../../plugins/test-controller/index.ts';
import governanceContent from '../../plugins/governance-content/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import { startServer, type TestServer } from '../support/server.ts';
import type { AdapterName } from '../support/db.ts';
import { OTHER_TOKEN, T0, TOKEN } from './fixture.ts';

export { OTHER_TOKEN, TOKEN };

/** The account references the storyboards use. */
export const ACME = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' };
export const NOVA = { brand: { domain: 'novamotors.example' }, operator: 'pinnacle-agency.example' };

/** A governance agent with content standards and the sandbox test controller on loopback (MCP, A2A, REST), on a manual clock. */
export async function startContentServer(adapter: AdapterName, schema: string): Promise<TestServer> {
  return startServer(
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
      governanceContent(),
      restTasks(),
      mcpHost(),
      a2aHost(),
    ],
    { env: { PROTOCOL_NAMESPACE: 'adcp' }, overrides: [[Clock, new ManualClock(T0)]], timers: new ManualTimers() },
  );
}

let n = 0;
/** A fresh idempotency key. */
export const key = () => `content-test-${String(++n).padStart(12, '0')}-${crypto.randomUUID().slice(0, 8)}`;

/** The storyboard's policies: a must prohibition, a should DPI rule, a must colour rule (not judged from text). */
export const POLICIES = [
  { policy_id: 'no_violent_imagery', policy_categories: ['brand_safety'], enforcement: 'must', policy: 'No violent or controversial imagery' },
  {
    policy_id: 'min_display_dpi',
    policy_categories: ['imagery_quality'],
    enforcement: 'should',
    channels: ['display'],
    policy: 'Minimum 72 DPI for display assets',
  },
  {
    policy_id: 'brand_color_tolerance',
    policy_categories: ['brand_compliance'],
    enforcement: 'must',
    policy: 'Brand colors must match palette within 5% tolerance',
  },
];

export const artifact = (id: string, over: Record<string, unknown> = {}) => ({
  property_rid: 'test-publisher.example',
  artifact_id: id,
  assets: [{ type: 'image', url: `https://cdn.pinnacle-agency.example/${id}.png`, width: 300, height: 250 }],
  ...over,
});
