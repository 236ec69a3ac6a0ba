import type { NewEvent } from '../../core/ports/events.ts';
import type { Entry } from '../../lib/revisioned/store.ts';
import type { PropertyData, SaveBody, StoredProperty } from './schemas.ts';

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 80) || 'property'
  );
}

/**
 * The stored record for a save: property ids given or derived from type and name (made unique),
 * and registry ids (UUIDs) carried over from the previous revision for properties that persist.
 */
export function toData(body: SaveBody, previous: PropertyData | undefined, newId: () => string): PropertyData {
  const prior = new Map((previous?.properties ?? []).map((p) => [p.id, p.rid]));
  const used = new Set<string>();
  const properties: StoredProperty[] = (body.properties ?? []).map((p) => {
    let id = p.id ?? `${p.type}_${slug(p.name)}`;
    for (let n = 2; used.has(id); n++) id = `${p.id ?? `${p.type}_${slug(p.name)}`}_${n}`;
    used.add(id);
    return { rid: prior.get(id) ?? newId(), id, type: p.type, name: p.name, identifiers: p.identifiers ?? [], tags: p.tags ?? [] };
  });
  return {
    authorized_agents: body.authorized_agents,
    properties,
    ...(body.contact ? { contact: body.contact } : {}),
  };
}

/** Property resolution result (SUPPLEMENT "Registry REST shapes"). */
export function resolution(entry: Entry<PropertyData>) {
  return {
    publisher_domain: entry.domain,
    source: entry.source,
    authorized_agents: entry.data.authorized_agents.map((a) => ({ url: a.url, authorized_for: a.authorized_for ?? null })),
    properties: entry.data.properties.map(({ id, type, name, identifiers, tags }) => ({ id, type, name, identifiers, tags })),
    contact: entry.data.contact ?? null,
    verified: entry.source === 'adagents_json',
  };
}

const same = (a: StoredProperty, b: StoredProperty) =>
  a.type === b.type &&
  a.name === b.name &&
  JSON.stringify(a.identifiers) === JSON.stringify(b.identifiers) &&
  JSON.stringify(a.tags) === JSON.stringify(b.tags);

/** Feed events for a change of one publisher's properties: created, updated, and removed (as updated with status). */
export function propertyEvents(domain: string, source: string, before: PropertyData | undefined, after: PropertyData, actor: string): NewEvent[] {
  const old = new Map((before?.properties ?? []).map((p) => [p.rid, p]));
  const events: NewEvent[] = [];
  for (const p of after.properties) {
    const prior = old.get(p.rid);
    old.delete(p.rid);
    if (!prior) {
      events.push({
        event_type: 'property.created',
        entity_type: 'property',
        entity_id: p.rid,
        actor,
        // Exactly the spec's property.created payload.
        payload: { property_rid: p.rid, classification: p.type, source, identifiers: p.identifiers },
      });
    } else if (!same(prior, p)) {
      events.push({
        event_type: 'property.updated',
        entity_type: 'property',
        entity_id: p.rid,
        actor,
        payload: {
          property_rid: p.rid,
          classification: p.type,
          source,
          identifiers: p.identifiers,
          publisher_domain: domain,
          property_id: p.id,
          name: p.name,
          tags: p.tags,
        },
      });
    }
  }
  for (const p of old.values()) {
    events.push({
      event_type: 'property.updated',
      entity_type: 'property',
      entity_id: p.rid,
      actor,
      payload: {
        property_rid: p.rid,
        classification: p.type,
        source,
        identifiers: p.identifiers,
        publisher_domain: domain,
        property_id: p.id,
        status: 'removed',
      },
    });
  }
  return events;
}
