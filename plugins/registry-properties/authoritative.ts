import type { Queryable } from '../../core/ports/database.ts';
import type { NewEvent } from '../../core/ports/events.ts';
import { findEntry, recordAuthoritative } from '../../lib/revisioned/store.ts';
import { PROPERTY_TABLES } from './tables.ts';
import { propertyEvents, toData } from './model.ts';
import type { PropertyData, SaveBody } from './schemas.ts';

/**
 * Make a publisher's entry authoritative from its validated adagents.json (called by the crawl
 * pipeline). From then on hosted saves answer 409. Returns the feed events of the change.
 */
export async function recordAdagentsJson(
  tx: Queryable,
  domain: string,
  doc: {
    authorized_agents?: Array<{ url: string; authorized_for?: string }>;
    properties?: Array<{ property_id?: string; property_type: string; name: string; identifiers?: Array<{ type: string; value: string }>; tags?: string[] }>;
  },
  options: { newId: () => string; now: Date; actor: string },
): Promise<NewEvent[]> {
  const before = await findEntry<PropertyData>(tx, PROPERTY_TABLES, domain);
  const body = {
    publisher_domain: domain,
    authorized_agents: (doc.authorized_agents ?? []).map((a) => ({ url: a.url, ...(a.authorized_for ? { authorized_for: a.authorized_for } : {}) })),
    properties: (doc.properties ?? []).map((p) => ({ id: p.property_id, type: p.property_type, name: p.name, identifiers: p.identifiers, tags: p.tags })),
  } as SaveBody;
  const data = toData(body, before?.data, options.newId);
  await recordAuthoritative(tx, PROPERTY_TABLES, domain, { source: 'adagents_json', data, document: doc, id: options.newId(), now: options.now });
  return propertyEvents(domain, 'adagents_json', before?.data, data, options.actor);
}
