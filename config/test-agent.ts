import { definePreset } from '../core/config.ts';
import { storageFor } from './storage.ts';
import auth from '../plugins/auth/index.ts';
import tasks from '../plugins/tasks/index.ts';
import idempotency from '../plugins/idempotency/index.ts';
import signals from '../plugins/signals/index.ts';
import testAgent from '../plugins/test-agent/index.ts';
import restHost from '../hosts/rest/index.ts';
import restTasks from '../hosts/rest/tasks.ts';
import mcpHost from '../hosts/mcp/index.ts';
import a2aHost from '../hosts/a2a/index.ts';

/** The published bearer token of the public test agent (README: "test token"). Not a secret. */
export const TEST_TOKEN = 'proto-test-agent-public-token-2025';

/**
 * The path-routed public test agent: each specialism under its own path (`/signals/mcp` now;
 * `/sales`, `/creative`, `/creative-builder`, `/governance`, `/brand` as their plugins arrive),
 * `/.well-known/adagents.json` listing tenants and tools, and a published test token.
 * Activations complete after a few seconds instead of the catalog's estimates.
 */
const TENANTS = [{ id: 'signals', name: 'Signals', protocols: ['signals'] }];

export default definePreset({
  name: 'test-agent',
  plugins: [
    storageFor,
    auth({ testTokens: [{ token: TEST_TOKEN, name: 'public test agent', tier: 'member' }] }),
    tasks(),
    idempotency(),
    signals({ activationDelaySeconds: 5 }),
    testAgent({ tenants: TENANTS }),
    restHost({ title: 'Public Test Agent' }),
    restTasks({ prefix: '/signals', protocols: ['signals'] }),
    mcpHost({ mounts: TENANTS.map((t) => ({ path: `/${t.id}/mcp`, protocols: t.protocols })) }),
    a2aHost({ mounts: TENANTS.map((t) => ({ prefix: `/${t.id}`, protocols: t.protocols, name: `Test agent: ${t.name}` })) }),
  ],
});
