import { definePreset } from '../core/config.ts';
import { storage } from './storage.ts';
import auth from '../plugins/auth/index.ts';
import tasks from '../plugins/tasks/index.ts';
import idempotency from '../plugins/idempotency/index.ts';
import inventoryDb from '../plugins/inventory-db/index.ts';
import adServerSimulated from '../plugins/ad-server-simulated/index.ts';
import { salesPlugins } from './sales.ts';
import restHost from '../hosts/rest/index.ts';
import restTasks from '../hosts/rest/tasks.ts';
import mcpHost from '../hosts/mcp/index.ts';
import a2aHost from '../hosts/a2a/index.ts';
import signerKeyring from '../plugins/signer-keyring/index.ts';
import signerHmacLegacy from '../plugins/signer-hmac-legacy/index.ts';
import crawlerHttp from '../plugins/crawler-http/index.ts';
import webhooks from '../plugins/webhooks/index.ts';
import requestSigning from '../plugins/request-signing/index.ts';

/**
 * A seller hosting its sales agent: MCP at /mcp, A2A at /a2a (card at
 * /.well-known/agent-card.json), REST at /tasks/{name}. Products come from the database catalog
 * (seeded on first start, `bun run sales import` for yours); orders run on the simulated ad server
 * until you bind your own AdServer adapter in its place. Callers use organization API keys.
 */
export default definePreset({
  name: 'sales-agent',
  plugins: [
    storage,
    auth(),
    tasks(),
    idempotency(),
    inventoryDb(),
    adServerSimulated(),
    ...salesPlugins(),
    // Lifecycle, delivery-report and impairment webhooks: RFC 9421 signed (JWKS at
    // /.well-known/jwks.json), legacy HMAC/Bearer when a registration asks for it; delivered from
    // the database outbox through the SSRF-guarded crawler, which also asks remote creative agents
    // about format ids.
    signerKeyring(),
    signerHmacLegacy(),
    crawlerHttp(),
    webhooks(),
    // Buyer-signed requests (RFC 9421) verified when signed; required for the tasks in REQUEST_SIGNING_REQUIRED_FOR.
    requestSigning(),
    restHost({ title: 'Sales Agent' }),
    restTasks(),
    mcpHost(),
    a2aHost(),
  ],
});
