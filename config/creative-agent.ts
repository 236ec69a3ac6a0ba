import { definePreset } from '../core/config.ts';
import { storage } from './storage.ts';
import auth from '../plugins/auth/index.ts';
import tasks from '../plugins/tasks/index.ts';
import idempotency from '../plugins/idempotency/index.ts';
import creative from '../plugins/creative/index.ts';
import salesAccounts from '../plugins/sales-accounts/index.ts';
import salesCreatives from '../plugins/sales-creatives/index.ts';
import restHost from '../hosts/rest/index.ts';
import restTasks from '../hosts/rest/tasks.ts';
import mcpHost from '../hosts/mcp/index.ts';
import a2aHost from '../hosts/a2a/index.ts';
import signerKeyring from '../plugins/signer-keyring/index.ts';
import signerHmacLegacy from '../plugins/signer-hmac-legacy/index.ts';
import crawlerHttp from '../plugins/crawler-http/index.ts';
import webhooks from '../plugins/webhooks/index.ts';
import requestSigning from '../plugins/request-signing/index.ts';

/** What the agent serves: the creative protocol (the library's and its accounts' tasks included), not the seller's. */
const PROTOCOLS = ['creative'];

/**
 * A vendor hosting the creative agent: MCP at /mcp, A2A at /a2a (card at
 * /.well-known/agent-card.json), REST at /tasks/{name}; previews at /previews/{id} and generated
 * files at /creative-assets/{id}. It generates and transforms creatives, and is an ad server over
 * its own creative library: buyers declare accounts (sync_accounts), upload creatives
 * (sync_creatives, list_creatives), take serving tags with trackers (build_creative of a creative_id,
 * hits at /creative-track/{id}), read delivery (get_creative_delivery) and report usage
 * (report_usage). Callers use organization API keys (format listing is public). Set PUBLIC_URL:
 * format ids, preview URLs, generated files and trackers carry it. BRAND_REGISTRY_URL points
 * `brand: {domain}` resolution at a registry.
 */
export default definePreset({
  name: 'creative-agent',
  plugins: [
    storage,
    auth(),
    tasks(),
    idempotency(),
    creative(),
    // The creative library, per buyer account: the seller's plugins, without media buys or products.
    salesAccounts(),
    salesCreatives(),
    // Push notifications for asynchronous builds: RFC 9421 signed (Ed25519 key generated on first
    // start, JWKS at /.well-known/jwks.json), legacy HMAC/Bearer when a registration asks for it;
    // delivered from the database outbox through the SSRF-guarded crawler (which also fetches brands).
    signerKeyring(),
    signerHmacLegacy(),
    crawlerHttp(),
    webhooks(),
    // Buyer-signed requests (RFC 9421) verified when signed; required for the tasks in REQUEST_SIGNING_REQUIRED_FOR.
    requestSigning(),
    restHost({ title: 'Creative Agent' }),
    restTasks({ protocols: PROTOCOLS }),
    mcpHost({ mounts: [{ path: '/mcp', protocols: PROTOCOLS }] }),
    a2aHost({ mounts: [{ prefix: '', protocols: PROTOCOLS }] }),
  ],
});
