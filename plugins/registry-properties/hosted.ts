import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { HostedPropertiesPort, HostedPublisher } from '../../core/ports/hosted-properties.ts';
import type { Entry } from '../../lib/revisioned/store.ts';
import type { PropertyData } from './schemas.ts';

const view = (e: Pick<Entry<PropertyData>, 'domain' | 'data'>): HostedPublisher => ({
  publisher_domain: e.domain,
  authorized_agents: e.data.authorized_agents.map((a) => ({ url: a.url, authorized_for: a.authorized_for ?? null })),
  properties: e.data.properties.map((p) => ({
    property_rid: p.rid,
    property_id: p.id,
    property_type: p.type,
    name: p.name,
    publisher_domain: e.domain,
    identifiers: p.identifiers,
  })),
});

/** Hosted entries (source `hosted`) for the discovery lookups. */
export function hostedProperties(db: DatabasePort): HostedPropertiesPort {
  return {
    async publisher(domain) {
      const [row] = await db.query<Pick<Entry<PropertyData>, 'domain' | 'data'>>(sql`
        SELECT domain, data FROM property_entries WHERE domain = ${domain}::text AND source = 'hosted'`);
      return row ? view(row) : null;
    },
    async byIdentifier(type, values) {
      const wanted = values.map((x) => x.toLowerCase());
      const rows = await db.query<Pick<Entry<PropertyData>, 'domain' | 'data'>>(sql`
        SELECT e.domain, e.data FROM property_entries e
        WHERE e.source = 'hosted' AND EXISTS (
          SELECT 1 FROM jsonb_array_elements(e.data->'properties') p, jsonb_array_elements(p->'identifiers') i
          WHERE i->>'type' = ${type}::text AND lower(i->>'value') = ANY(${wanted}::text[]))
        ORDER BY e.domain LIMIT 100`);
      return rows.map((r) => {
        const v = view(r);
        // Only the properties that carry the identifier.
        return {
          ...v,
          properties: v.properties.filter((p) => p.identifiers.some((i) => i.type === type && wanted.includes(i.value.toLowerCase()))),
        };
      });
    },
  };
}
