import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Governance } from '../../core/ports/governance.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { Tasks } from '../../core/task.ts';
import { ConfigError } from '../../core/config-error.ts';
import { RIGHT_TYPES, RIGHT_USES, rightOption, type Right } from './catalog.ts';
import type { RightsDeps } from './deps.ts';
import { getRightsTask } from './get-rights.ts';
import { acquireRightsTask } from './acquire-rights.ts';
import { updateRightsTask } from './update-rights.ts';
import { creativeApprovalTask } from './creative-approval.ts';
import { SalesAccounts } from '../../core/ports/sales-accounts.ts';
import { forceRightsRevoked } from './revocation.ts';
import { searchBrandsTask, type RosterBrand } from './search-brands.ts';
import { BrandProfiles } from '../../core/ports/brand-profiles.ts';
import { domainSchema } from '../../lib/domain.ts';

export { SANDBOX_RIGHTS } from './catalog.ts';

const options = v.object({
  /** The brands on this agent's roster (search_brands): a registry domain, optionally with its brand.json brand id. */
  brands: v.optional(
    v.array(v.union([domainSchema(), v.object({ domain: domainSchema(), brand_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))) })])),
    [],
  ),
  /** The licensable rights of the brands this agent represents, with their pricing options. */
  rights: v.optional(v.array(rightOption), []),
  /** Rights with approval_required: the (sandbox) rights holder approves this long after acquire_rights, which answers `submitted` until then. */
  approvalDelaySeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(30 * 86_400)), 5),
  /** Where the brand agent is mounted below the public URL (the test agent's `/brand`), for the URL rights constraints name. */
  mount: v.optional(v.pipe(v.string(), v.regex(/^(\/[a-z0-9-]+)*$/, 'must be a path such as /brand')), ''),
});

/**
 * Brand rights on the brand agent: `get_rights` (the catalog's rights covering the requested uses,
 * with pricing options), `acquire_rights` (grants per account; a governed account's governance
 * agent is asked first through the Governance port), `update_rights`, `creative_approval`,
 * `sync_governance` (who governs an account's licences), `search_brands` (the roster, from the registry's
 * brand data through BrandProfiles), and revocations pushed to the buyer's
 * revocation_webhook through the webhook outbox (signed). The grants table is this plugin's.
 */
export default definePlugin({
  name: 'brand-rights',
  deps: {
    db: Database,
    clock: Clock,
    tasks: Tasks,
    profiles: optional(BrandProfiles),
    governance: optional(Governance),
    accounts: optional(SalesAccounts),
    outbox: optional(WebhookOutbox),
    controller: optional(TestController),
  },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, tasks, profiles, governance, accounts, outbox, controller }, kernel) {
    const o = kernel.options;
    const catalog: Right[] = o.rights;
    const seen = new Set<string>();
    for (const [i, r] of catalog.entries()) {
      if (seen.has(r.rights_id)) throw new ConfigError(`plugins.brand-rights.rights.${i}.rights_id: ${r.rights_id} is declared twice`);
      seen.add(r.rights_id);
      for (const p of r.pricing_options)
        if (p.uses.some((u) => !r.available_uses.includes(u)))
          throw new ConfigError(`plugins.brand-rights.rights.${i}.pricing_options: ${p.pricing_option_id} licenses a use the right does not offer`);
    }
    const agentUrl = `${(kernel.config.server.publicUrl ?? `http://localhost:${kernel.config.server.port}`).replace(/\/+$/, '')}${o.mount}`;
    const deps: RightsDeps = { db, catalog, governance, accounts, outbox, agentUrl, approvalDelaySeconds: o.approvalDelaySeconds };
    tasks.add(getRightsTask(deps), acquireRightsTask(deps), updateRightsTask(deps), creativeApprovalTask(deps));
    const roster: RosterBrand[] = o.brands.map((b) => (typeof b === 'string' ? { domain: b } : b));
    if (roster.length) tasks.add(searchBrandsTask(roster, catalog, profiles, kernel.logger));
    const types = [...new Set(catalog.map((r) => r.right_type))];
    const uses = [...new Set(catalog.flatMap((r) => r.available_uses))];
    tasks.declareCapability({
      protocol: 'brand',
      block: {
        brand: {
          rights: true,
          right_types: RIGHT_TYPES.filter((t) => types.includes(t)),
          available_uses: RIGHT_USES.filter((u) => uses.includes(u)),
          generation_providers: ['brand-agent'],
        },
      },
      specialisms: ['brand-rights'],
    });
    controller?.register(forceRightsRevoked(deps, clock));
  },
});
