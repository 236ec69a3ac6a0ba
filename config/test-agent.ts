import { definePreset } from '../core/config.ts';
import { storage } from './storage.ts';
import auth from '../plugins/auth/index.ts';
import tasks from '../plugins/tasks/index.ts';
import idempotency from '../plugins/idempotency/index.ts';
import signals, { DEFAULT_SEED as SIGNALS_SEED } from '../plugins/signals/index.ts';
import inventoryDb, { DEFAULT_SEED } from '../plugins/inventory-db/index.ts';
import { CONFORMANCE_PRODUCTS, CONFORMANCE_SIGNALS, SANDBOX_LISTS, SANDBOX_PUBLISHERS } from '../plugins/test-agent/index.ts';
import adServerSimulated from '../plugins/ad-server-simulated/index.ts';
import { salesPlugins } from './sales.ts';
import creative from '../plugins/creative/index.ts';
import governance from '../plugins/governance/index.ts';
import governanceLists from '../plugins/governance-lists/index.ts';
import governanceContent from '../plugins/governance-content/index.ts';
import registryBrands from '../plugins/registry-brands/index.ts';
import brandAgent from '../plugins/brand-agent/index.ts';
import { siConversation } from './si-conversation.ts';
import brandRights, { SANDBOX_RIGHTS } from '../plugins/brand-rights/index.ts';
import testController from '../plugins/test-controller/index.ts';
import testAgent from '../plugins/test-agent/index.ts';
import restHost from '../hosts/rest/index.ts';
import restTasks from '../hosts/rest/tasks.ts';
import mcpHost from '../hosts/mcp/index.ts';
import a2aHost from '../hosts/a2a/index.ts';
import signerKeyring from '../plugins/signer-keyring/index.ts';
import signerHmacLegacy from '../plugins/signer-hmac-legacy/index.ts';
import crawlerHttp from '../plugins/crawler-http/index.ts';
import webhooks from '../plugins/webhooks/index.ts';
import { conformanceSigning } from './conformance-signing.ts';
import rateLimit from '../plugins/rate-limit/index.ts';

/** The published bearer token of the public test agent (README: "test token"). Not a secret. */
export const TEST_TOKEN = 'proto-test-agent-public-token-2025';

/** Sandbox brands the test agent's brand tenant represents (seeded from plugins/test-agent/sandbox-brands.json). */
export const SANDBOX_BRANDS = [
  { domain: 'acme-outdoor.example', brand_id: 'acme_outdoor' },
  { domain: 'nimbus-cola.example', brand_id: 'nimbus_cola' },
  // The AdCP test kits' sample brand (nova-motors.yaml), which brand_baseline asks every brand agent for.
  { domain: 'novamotors.example', brand_id: 'nova_motors' },
];

/** The sponsored-intelligence offering of the test kits' brand (the other sandbox brands get a default one). */
export const SI_OFFERINGS = [
  {
    offering_id: 'novamotors_conversational_v1',
    brand: 'novamotors.example',
    title: 'Nova Motors: the Volta EV',
    summary: 'Ask about the Volta EV: range, charging and road trips.',
    tagline: 'Electric, all the way',
    price_hint: 'from $41,900',
    landing_url: 'https://novamotors.example/volta',
    products: [
      {
        product_id: 'volta_ev_long_range',
        name: 'Volta EV Long Range',
        description: 'Electric SUV with 320 miles of range and fast charging for long road trips.',
        price: '$46,900',
        url: 'https://novamotors.example/volta/long-range',
      },
      {
        product_id: 'volta_ev_standard',
        name: 'Volta EV Standard',
        description: 'Electric SUV with 260 miles of range for daily driving.',
        price: '$41,900',
        url: 'https://novamotors.example/volta/standard',
      },
    ],
  },
];

/**
 * Every specialism under its own path, each with MCP (`/{id}/mcp`), A2A (`/{id}/a2a`, card at
 * `/{id}/.well-known/agent-card.json`) and REST (`/{id}/tasks/{name}`), serving only its own
 * tasks plus capabilities and task status, and the sandbox test controller (`compliance`) where
 * the specialism has scenarios (sales, signals, governance, creative).
 * `/creative` (templates, transformation, previews) and `/creative-builder` (generative builds)
 * are one creative plugin serving the same tasks, and an ad server (creative-ad-server) over the
 * seller's creative library, which the controller seeds. `/sales` also serves the creative tasks: a
 * seller that builds creatives is found at one URL (storyboard creative_generative/seller).
 */
export const TENANTS = [
  { id: 'signals', name: 'Signals', protocols: ['signals', 'compliance'] },
  { id: 'sales', name: 'Sales', protocols: ['media_buy', 'creative', 'compliance'] },
  { id: 'creative', name: 'Creative', protocols: ['creative', 'compliance'] },
  { id: 'creative-builder', name: 'Creative builder', protocols: ['creative', 'compliance'] },
  // The governance storyboards act as a buyer on ONE url: plans and checks, then create_media_buy
  // and delivery under them. The governance agent's path therefore fronts the same seller too.
  { id: 'governance', name: 'Governance', protocols: ['governance', 'media_buy', 'compliance'] },
  // Brand identity, rights licensing (specialism brand-rights) and sponsored intelligence.
  { id: 'brand', name: 'Brand', protocols: ['brand', 'sponsored_intelligence', 'compliance'] },
];

/**
 * The path-routed public test agent with sandbox data: `/.well-known/adagents.json` lists the
 * tenants and their tools; a published test token; signals, products, formats and sandbox brands
 * seeded. Activations complete after a few seconds; sales are sandbox buys on the simulated ad
 * server that consult the governance tenant when they name a plan; builds answer at once, as a
 * stateless creative agent's do; `comply_test_controller` forces transitions (buys, activations,
 * impairments, late reports) and seeds fixtures.
 */
export default definePreset({
  name: 'test-agent',
  plugins: [
    storage,
    auth({ testTokens: [{ token: TEST_TOKEN, name: 'public test agent', tier: 'member' }] }),
    tasks(),
    idempotency(),
    testController({ enabled: true }),
    signals({ activationDelaySeconds: 5, seed: [SIGNALS_SEED, CONFORMANCE_SIGNALS] }),
    // The sandbox catalog plus the product the official storyboards buy when they name none.
    // Product fixtures the storyboards seed sell the test kits' outdoor publishers (their property lists name them).
    inventoryDb({ seed: [DEFAULT_SEED, CONFORMANCE_PRODUCTS], fixturePublishers: SANDBOX_PUBLISHERS }),
    adServerSimulated(),
    governance(),
    // Property and collection lists on the governance agent (resolved through the registry where one is deployed).
    governanceLists(),
    // Content standards on the governance agent (calibration and delivery validation by the rules engine).
    governanceContent(),
    // Before the sales plugins: the sales agent validates format ids with it (and capabilities list creative first).
    creative(),
    // A caller that lists accounts before declaring one finds the test kits' account (storyboard audience_sync).
    ...salesPlugins({
      sandbox: true,
      minAudienceSize: 10,
      sandboxAccounts: [{ brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' }],
      // The test kits' property and collection lists, resolved without their (fictional) governance agent.
      sandboxLists: SANDBOX_LISTS,
    }),
    // The registry's brand data (sandbox brands seeded at start) behind the brand tenant and brand-aware builds.
    rateLimit(),
    registryBrands(),
    brandAgent({ brands: SANDBOX_BRANDS, si: { mount: '/brand', offerings: SI_OFFERINGS } }),
    // Sessions answered by a model when SI_MODEL_URL is set (else the brand agent's catalog conversation).
    siConversation,
    // Rights licensing of the sandbox brands (specialism brand-rights on /brand), governed accounts checked with the governance plugin.
    brandRights({ brands: SANDBOX_BRANDS, rights: SANDBOX_RIGHTS, mount: '/brand' }),
    // Push notifications: RFC 9421 signed (Ed25519 key generated on first start, JWKS at
    // /.well-known/jwks.json), legacy HMAC/Bearer when a registration asks for it; delivered
    // from the database outbox through the SSRF-guarded crawler.
    signerKeyring(),
    signerHmacLegacy(),
    crawlerHttp(),
    webhooks(),
    // Buyer-signed requests (RFC 9421) verified on every tenant; the conformance runner's test keys trusted (sandbox).
    conformanceSigning(TENANTS.flatMap((t) => [`/${t.id}/mcp`, `/${t.id}/a2a`])),
    testAgent({ tenants: TENANTS }),
    restHost({ title: 'Public Test Agent' }),
    restTasks({ mounts: TENANTS.map((t) => ({ prefix: `/${t.id}`, protocols: t.protocols })) }),
    mcpHost({ mounts: TENANTS.map((t) => ({ path: `/${t.id}/mcp`, protocols: t.protocols })) }),
    a2aHost({ mounts: TENANTS.map((t) => ({ prefix: `/${t.id}`, protocols: t.protocols, name: `Test agent: ${t.name}` })) }),
  ],
});
