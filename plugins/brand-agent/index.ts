import * as v from 'valibot';
import { definePlugin, optional } from '../../core/plugin.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { BrandProfiles } from '../../core/ports/brand-profiles.ts';
import { Tasks } from '../../core/task.ts';
import { domainSchema } from '../../lib/domain.ts';
import { createRegistryBrandProfiles } from './registry-client.ts';
import { getBrandIdentityTask, type RepresentedBrand } from './get-brand-identity.ts';
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Conversation } from '../../core/ports/conversation.ts';
import { createOfferings, offeringOption } from './si/offerings.ts';
import { siTasks } from './si/tasks.ts';
import { createCatalogConversation } from './si/conversation.ts';
import { forceSessionStatus } from './si/test-controls.ts';
import { Clock } from '../../core/ports/clock.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { ResponseSigner } from '../../core/ports/signer.ts';
import { verifyBrandClaimTasks } from './verify-brand-claim.ts';
import { siPreviewRoute } from './si/preview-route.ts';
import { Http } from '../../core/http.ts';
import { Auth } from '../../core/ports/auth.ts';
import { Ownership } from '../../core/ports/ownership.ts';
import { BrandHolders } from '../../core/ports/brand-holders.ts';

const options = v.object({
  /** The brands this agent represents: a domain (the registry key), optionally with its brand.json brand id. */
  brands: v.optional(
    v.array(v.union([domainSchema(), v.object({ domain: domainSchema(), brand_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))) })])),
    [],
  ),
  /** A brand registry to read (`GET {url}/api/brands/resolve`) when none is in this deployment. */
  registryUrl: v.optional(v.pipe(v.string(), v.url('must be an absolute URL'))),
  /** http:// registry URLs (loopback tests with the crawler's allowlist); never in production. */
  allowHttpRegistry: v.optional(v.boolean(), false),
  /** Lifetime of the signed_response of verify_brand_claim(s) (payload `exp` - `iat`). */
  signedResponseTtlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(86_400)), 3600),
  /** Sponsored intelligence: conversational offerings of the represented brands (each brand gets a default one). */
  si: v.optional(
    v.object({
      offerings: v.optional(v.array(offeringOption), []),
      /** A session with no message for this long ends (session_timeout). */
      sessionTtlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(86_400)), 1800),
      /** Where this agent is mounted below the public URL (the test agent's `/brand`), for the endpoint it advertises and the `agent_url` of signed answers. */
      mount: v.optional(v.pipe(v.string(), v.regex(/^(\/[a-z0-9-]+)*$/, 'must be a path such as /brand')), ''),
    }),
    {},
  ),
});

/**
 * Brand agent: `get_brand_identity` for the brands it represents, `verify_brand_claim(s)` answered from
 * their brand.json, weighed against the registry's proofs of domain control when registry-ownership runs
 * beside registry-brands, and signed with the deployment's response-signing key (when a ResponseSigner is
 * deployed: signer-keyring), sponsored-intelligence sessions
 * (`si_*` tasks, answered through the Conversation port or the built-in catalog conversation), from the registry's brand data
 * through the BrandProfiles port: the registry of the same deployment (registry-brands), or a
 * registry at a configured URL through the SSRF-guarded crawler.
 */
export default definePlugin({
  name: 'brand-agent',
  deps: {
    db: Database,
    clock: Clock,
    tasks: Tasks,
    http: Http,
    auth: optional(Auth),
    profiles: optional(BrandProfiles),
    crawler: optional(Crawler),
    conversation: optional(Conversation),
    controller: optional(TestController),
    responseSigner: optional(ResponseSigner),
    ownership: optional(Ownership),
    holders: optional(BrandHolders),
  },
  options,
  env: { BRAND_AGENT_BRANDS: { path: 'brands', type: 'csv' }, BRAND_REGISTRY_URL: 'registryUrl' },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, tasks, http, auth, profiles, crawler, conversation, controller, responseSigner, ownership, holders }, kernel) {
    const o = kernel.options;
    let source = profiles;
    if (o.registryUrl) {
      if (!crawler) throw new ConfigError('plugins.brand-agent.registryUrl: needs a crawler in the deployment (crawler-http) for outbound requests');
      // A configured registry URL wins over a registry plugin in the same deployment.
      source = createRegistryBrandProfiles(crawler, o.registryUrl, { allowHttp: o.allowHttpRegistry });
    }
    if (!source)
      throw new ConfigError('plugins.brand-agent: needs the brand registry in this deployment (registry-brands) or registryUrl (BRAND_REGISTRY_URL)');
    const brands: RepresentedBrand[] = o.brands.map((b) => (typeof b === 'string' ? { domain: b } : b));
    tasks.add(getBrandIdentityTask(brands, source, kernel.logger));
    tasks.declareCapability({ protocol: 'brand', block: { brand: { rights: false } } });

    const si = o.si;
    const base = `${(kernel.config.server.publicUrl ?? `http://localhost:${kernel.config.server.port}`).replace(/\/+$/, '')}${si.mount}`;
    if (responseSigner) {
      // Verification answers must be signed (signed_response is required): no response signer, no verify tasks.
      responseSigner.enable();
      tasks.add(
        ...verifyBrandClaimTasks({
          brands,
          profiles: source,
          signer: responseSigner,
          clock,
          logger: kernel.logger,
          agentUrl: `${base}/mcp`,
          ttlSeconds: o.signedResponseTtlSeconds,
          // Proofs of this deployment's registry weigh only answers from its own brand entries, not a registry elsewhere.
          control: ownership && holders && !o.registryUrl ? { ownership, holders } : undefined,
        }),
      );
    }
    const offerings = createOfferings(
      si.offerings,
      brands.map((b) => b.domain),
      source,
    );
    tasks.add(...siTasks({ db, offerings, conversation: conversation ?? createCatalogConversation(), sessionTtlSeconds: si.sessionTtlSeconds }));
    http.add(siPreviewRoute(db, auth, si.mount));
    controller?.register(forceSessionStatus(db, clock));
    tasks.declareCapability({
      protocol: 'sponsored_intelligence',
      block: {
        sponsored_intelligence: {
          endpoint: {
            transports: [
              { type: 'mcp', url: `${base}/mcp` },
              { type: 'a2a', url: `${base}/a2a` },
            ],
            preferred: 'mcp',
          },
          capabilities: { modalities: { conversational: true }, components: { standard: ['text', 'product_card', 'action_button'] } },
        },
      },
    });
  },
});
