import * as v from 'valibot';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { Database } from '../../core/ports/database.ts';
import { TaskGateway } from '../../core/ports/task-gateway.ts';
import { Clock } from '../../core/ports/clock.ts';
import { trustedBaseUrl, untrustedHostResponse } from '../../lib/urls.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { BrandProfiles } from '../../core/ports/brand-profiles.ts';

export const SANDBOX_BRANDS = join(import.meta.dir, 'sandbox-brands.json');
/** Products the official AdCP storyboards expect a sandbox seller to hold (inventory-db seed format). */
export const CONFORMANCE_PRODUCTS = join(import.meta.dir, 'conformance-products.json');
/** The AdCP test kits' signals (nova-motors: marketplace and owned, with their named pricing options). */
export const CONFORMANCE_SIGNALS = join(import.meta.dir, 'conformance-signals.json');
/** The AdCP test kits' property and collection lists (acme-outdoor inventory_targets), pinned in the sandbox seller. */
export const SANDBOX_LISTS = join(import.meta.dir, 'inventory-lists.json');
/** The sandbox's publishers: product fixtures sell them; the test kits' matching property list names them. */
export const SANDBOX_PUBLISHERS = [
  'sandbox-publisher.example',
  'outdoormagazine.example',
  'hikingtrails.example',
  'campinggear.example',
  'mountaineering.example',
];

const tenant = v.object({
  /** Specialism id and path segment (`signals` -> `/signals/mcp`). */
  id: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{0,40}$/)),
  name: v.string(),
  /** Protocol groups of the tasks served there. */
  protocols: v.array(v.string()),
});

const options = v.object({
  tenants: v.array(tenant),
  /**
   * brand.json documents of sandbox brands (`.example` domains), keyed by domain, recorded in the
   * registry of this deployment at start when it has no entry for them; `false`: none.
   */
  sandboxBrands: v.optional(v.union([v.string(), v.literal(false)]), SANDBOX_BRANDS),
});

/**
 * The path-routed public test agent: `/.well-known/adagents.json` lists which tenants
 * (specialisms) it serves, where (MCP, A2A, REST) and with which tools; sandbox brands are
 * seeded into the registry so the brand agent (and brand-aware creative builds) answer at once.
 */
export default definePlugin({
  name: 'test-agent',
  deps: { gateway: TaskGateway, http: Http, clock: Clock, db: Database, records: optional(BrandJsonRecords), profiles: optional(BrandProfiles) },
  options,
  init({ gateway, http, clock, db, records, profiles }, kernel) {
    // The tenants and tools are fixed when the deployment starts.
    const started = clock.now().toISOString();
    http.add({
      method: 'GET',
      path: '/.well-known/adagents.json',
      handle(request) {
        const base = trustedBaseUrl(kernel.config.server, request);
        if (base === null) return untrustedHostResponse();
        const tenants = kernel.options.tenants.map((t) => ({
          id: t.id,
          name: t.name,
          path: `/${t.id}`,
          mcp: `${base}/${t.id}/mcp`,
          a2a: `${base}/${t.id}/.well-known/agent-card.json`,
          rest: `${base}/${t.id}/tasks/{name}`,
          tools: gateway.describe(t.protocols).map((task) => task.name),
        }));
        const body = {
          authorized_agents: tenants.map((t) => ({ url: t.mcp, authorized_for: `${t.name} agent` })),
          tenants,
          authentication: { scheme: 'Bearer', test_token: 'see README: test token' },
          last_updated: started,
        };
        return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' } });
      },
    });
    return {
      async start() {
        const file = kernel.options.sandboxBrands;
        if (!file || !records || !profiles) return;
        const documents = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
        for (const [domain, document] of Object.entries(documents)) {
          if (!domain.endsWith('.example')) throw new Error(`sandbox brand ${domain}: only .example domains are seeded`);
          // A real entry (crawled or saved) is never replaced.
          if (await profiles.get(domain)) continue;
          await db.transaction((tx) => records.record(tx, domain, document));
          kernel.logger.info({ domain }, 'sandbox brand seeded');
        }
      },
    };
  },
});
