import type { DatabasePort } from '../../core/ports/database.ts';
import type { SearchPort } from '../../core/ports/search.ts';
import type { EventLogPort } from '../../core/ports/events.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { BrandMatch, DirectoryPort, PropertyMatch } from '../../core/ports/directory.ts';
import type { Principal } from '../../core/ports/auth.ts';
import type { HostedPropertiesPort } from '../../core/ports/hosted-properties.ts';
import { tierAtLeast } from '../../core/ports/auth.ts';
import { sql, type SqlFragment } from '../../core/sql.ts';
import type { SchemaValidator } from '../../lib/registry-documents/schema-validation.ts';
import type { IdsPort } from '../../core/ports/ids.ts';

/** What the endpoints of this plugin share; optional collaborators are undefined when not deployed. */
export interface DiscoveryContext {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  search: SearchPort | undefined;
  /** Wake the search outbox drain after a commit that queued index changes (never waits for it). */
  searchChanged(): void;
  events: EventLogPort | undefined;
  /** Site-wide search sources of the brands and properties plugins, when deployed. */
  brands: DirectoryPort<BrandMatch> | undefined;
  hostedProperties: DirectoryPort<PropertyMatch> | undefined;
  /** Hosted publisher entries (registry-properties), which lookups treat as the publisher side. */
  hosted: HostedPropertiesPort | undefined;
  schemas: SchemaValidator;
}

/** API-tier callers (member or admin) see members_only; owners also see their private agents. */
export function viewerOf(principal: Principal | null): { member: boolean; orgId: string | null } {
  return { member: !!principal && tierAtLeast(principal.tier, 'member'), orgId: principal?.orgId ?? null };
}

/** SQL visibility predicate on registry_agents aliased `a`. */
export function visibleAgents(principal: Principal | null): SqlFragment {
  const v = viewerOf(principal);
  return sql`(a.visibility = 'public' OR (${v.member}::boolean AND a.visibility = 'members_only') OR a.owner_org_id = ${v.orgId}::uuid)`;
}
