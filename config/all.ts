import { definePreset } from '../core/config.ts';
import { storage } from './storage.ts';
import { registryFeatures } from './registry-features.ts';
import { SANDBOX_BRANDS, TENANTS } from './test-agent.ts';
import auth from '../plugins/auth/index.ts';
import tasks from '../plugins/tasks/index.ts';
import idempotency from '../plugins/idempotency/index.ts';
import testController from '../plugins/test-controller/index.ts';
import signals from '../plugins/signals/index.ts';
import inventoryDb from '../plugins/inventory-db/index.ts';
import adServerSimulated from '../plugins/ad-server-simulated/index.ts';
import { salesPlugins } from './sales.ts';
import governance from '../plugins/governance/index.ts';
import governanceLists from '../plugins/governance-lists/index.ts';
import governanceContent from '../plugins/governance-content/index.ts';
import creative from '../plugins/creative/index.ts';
import brandAgent from '../plugins/brand-agent/index.ts';
import { siConversation } from './si-conversation.ts';
import brandRights, { SANDBOX_RIGHTS } from '../plugins/brand-rights/index.ts';
import testAgent from '../plugins/test-agent/index.ts';
import signerKeyring from '../plugins/signer-keyring/index.ts';
import signerHmacLegacy from '../plugins/signer-hmac-legacy/index.ts';
import webhooks from '../plugins/webhooks/index.ts';
import requestSigning from '../plugins/request-signing/index.ts';
import mcpEndpoints from '../hosts/mcp-endpoints/index.ts';
import web from '../hosts/web/index.ts';
import restHost from '../hosts/rest/index.ts';
import restTasks from '../hosts/rest/tasks.ts';
import mcpHost from '../hosts/mcp/index.ts';
import a2aHost from '../hosts/a2a/index.ts';

/**
 * Everything in one process on one database, for a single-box trial: the registry API at `/api`
 * and every agent path-routed like the test agent (`/sales`, `/signals`, `/governance`,
 * `/creative`, `/creative-builder`, `/brand`, each with `/mcp`, `/a2a` and `/tasks/{name}`;
 * tenants and tools at `/.well-known/adagents.json`). The agents use the registry in the same
 * process (brand resolution for builds and the brand agent), sales consult the governance
 * agent when a buy names a plan, and buys are sandbox buys on the simulated ad server
 * (`SALES_SANDBOX=false` to change that), so `comply_test_controller` can move them along.
 * Callers use organization API keys (`bun run admin create-org` / `create-key`).
 */
export default definePreset({
  name: 'all',
  plugins: [
    storage,
    auth(),
    // The registry.
    ...registryFeatures(),
    // The agents.
    tasks(),
    idempotency(),
    testController({ enabled: true }),
    signals(),
    inventoryDb(),
    adServerSimulated(),
    governance(),
    // Property and collection lists on the governance agent (resolved through the registry where one is deployed).
    governanceLists(),
    // Content standards on the governance agent (calibration and delivery validation by the rules engine).
    governanceContent(),
    // Before the sales plugins: they validate format ids with it (and capabilities list creative first).
    creative(),
    ...salesPlugins({ sandbox: true, minAudienceSize: 10 }),
    brandAgent({ brands: SANDBOX_BRANDS, si: { mount: '/brand' } }),
    // Sessions answered by a model when SI_MODEL_URL is set (else the brand agent's catalog conversation).
    siConversation,
    // Rights licensing of the sandbox brands on the brand agent (get_rights, acquire_rights...).
    brandRights({ brands: SANDBOX_BRANDS, rights: SANDBOX_RIGHTS, mount: '/brand' }),
    testAgent({ tenants: TENANTS }),
    signerKeyring(),
    signerHmacLegacy(),
    webhooks(),
    // Buyer-signed requests (RFC 9421) verified when signed; required for the tasks in REQUEST_SIGNING_REQUIRED_FOR.
    requestSigning(),
    restHost({ title: 'Registry and agents' }),
    // The registry's endpoints as MCP tools at /mcp, and its web page at /.
    mcpEndpoints(),
    web(),
    restTasks({ mounts: TENANTS.map((t) => ({ prefix: `/${t.id}`, protocols: t.protocols })) }),
    mcpHost({ mounts: TENANTS.map((t) => ({ path: `/${t.id}/mcp`, protocols: t.protocols })) }),
    a2aHost({ mounts: TENANTS.map((t) => ({ prefix: `/${t.id}`, protocols: t.protocols, name: t.name })) }),
  ],
});
