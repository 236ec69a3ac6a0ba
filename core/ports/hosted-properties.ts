import { token } from '../token.ts';

/** A property of a hosted (community-maintained) publisher entry. */
export interface HostedProperty {
  /** Stable registry id (UUID). */
  property_rid: string;
  property_id: string;
  property_type: string;
  name: string;
  publisher_domain: string;
  identifiers: Array<{ type: string; value: string }>;
}

/** A hosted publisher entry: what its maintainers declare instead of an adagents.json. */
export interface HostedPublisher {
  publisher_domain: string;
  authorized_agents: Array<{ url: string; authorized_for: string | null }>;
  properties: HostedProperty[];
}

/**
 * Hosted property entries (saved through `POST /api/properties/save`), read by the discovery
 * lookups so a hosted publisher answers like one with an adagents.json. Entries backed by a crawled
 * adagents.json are not hosted. Identifier values compare case-insensitively.
 * Contract: test/registry/hosted-lookups.test.ts.
 */
export interface HostedPropertiesPort {
  publisher(domain: string): Promise<HostedPublisher | null>;
  /** Hosted publishers with a property carrying one of `values` as an identifier of `type`. */
  byIdentifier(type: string, values: readonly string[]): Promise<HostedPublisher[]>;
}

export const HostedProperties = token<HostedPropertiesPort>('registry.hosted-properties');
