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
import signerEd25519 from '../plugins/signer-ed25519/index.ts';
import signerHmacLegacy from '../plugins/signer-hmac-legacy/index.ts';
import crawlerHttp from '../plugins/crawler-http/index.ts';
import webhooks from '../plugins/webhooks/index.ts';

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
    // Push notifications: RFC 9421 signed (Ed25519 key generated on first start, JWKS at
    // /.well-known/jwks.json), legacy HMAC/Bearer when a registration asks for it; delivered
    // from the database outbox through the SSRF-guarded crawler.
    signerEd25519(),
    signerHmacLegacy(),
    crawlerHttp(),
    webhooks(),
    testAgent({ tenants: TENANTS }),
    restHost({ title: 'Public Test Agent' }),
    restTasks({ prefix: '/signals', protocols: ['signals'] }),
    mcpHost({ mounts: TENANTS.map((t) => ({ path: `/${t.id}/mcp`, protocols: t.protocols })) }),
    a2aHost({ mounts: TENANTS.map((t) => ({ prefix: `/${t.id}`, protocols: t.protocols, name: `Test agent: ${t.name}` })) }),
  ],
});
