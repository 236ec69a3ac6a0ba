import { v5 } from 'uuid';
import type { NewEvent } from '../../core/ports/events.ts';
import type { AdagentsDiff, AuthorizationChange, CollectionChange, PropertyChange } from '../../core/ports/discovery.ts';

export const CRAWLER_ACTOR = 'crawler';

/** Authorizations have a composite key (agent, property); their entity id is a name-based UUID of it. */
const AUTHORIZATION_NAMESPACE = '6f1c2a52-8a5e-4d0b-9a57-2f5f0c3c6d11';
export const authorizationId = (a: { agent_id: string; property_rid: string }) => v5(`${a.agent_id}|${a.property_rid}`, AUTHORIZATION_NAMESPACE);

/**
 * Every event a projection diff implies, in a stable order (publisher, properties, merges,
 * collections, agents, authorizations, profiles). `property.created` carries exactly the payload the spec shows.
 */
export function eventsForDiff(diff: AdagentsDiff, source: string): NewEvent[] {
  const out: NewEvent[] = [];
  const domain = diff.publisher.domain;
  const ev = (event_type: string, entity_type: string, entity_id: string, payload: Record<string, unknown>) =>
    out.push({ event_type, entity_type, entity_id, payload, actor: CRAWLER_ACTOR });
  if (diff.publisher.valid && diff.publisher.created) {
    ev('publisher.adagents_discovered', 'publisher', diff.publisher.id, { domain, source });
  } else if (diff.publisher.changed && !diff.publisher.created) {
    ev('publisher.adagents_changed', 'publisher', diff.publisher.id, { domain, source, valid: diff.publisher.valid });
  }
  const property = (p: PropertyChange) => ({
    property_rid: p.property_rid,
    publisher_domain: domain,
    property_type: p.property_type,
    name: p.name,
    identifiers: p.identifiers,
  });
  for (const p of diff.properties.created) {
    ev('property.created', 'property', p.property_rid, { property_rid: p.property_rid, classification: p.property_type, source, identifiers: p.identifiers });
  }
  for (const p of diff.properties.updated) ev('property.updated', 'property', p.property_rid, property(p));
  for (const p of diff.properties.reactivated) ev('property.reactivated', 'property', p.property_rid, property(p));
  for (const p of diff.properties.stale) {
    ev('property.stale', 'property', p.property_rid, { ...property(p), reason: diff.publisher.valid ? 'removed_from_adagents' : 'adagents_invalid' });
  }
  for (const m of diff.property_merges) {
    ev('property.merged', 'property', m.rid, {
      property_rid: m.rid,
      merged_into: m.merged_into,
      publisher_domain: m.publisher_domain,
      identifiers: m.identifiers,
    });
  }
  const collection = (c: CollectionChange) => ({
    collection_rid: c.collection_rid,
    collection_id: c.collection_id,
    publisher_domain: c.publisher_domain,
    name: c.name,
    kind: c.kind,
    distribution: c.distribution,
  });
  for (const c of diff.collections.created) ev('collection.created', 'collection', c.collection_rid, collection(c));
  for (const c of diff.collections.updated) ev('collection.updated', 'collection', c.collection_rid, collection(c));
  for (const c of diff.collections.removed) {
    ev('collection.removed', 'collection', c.collection_rid, {
      collection_rid: c.collection_rid,
      collection_id: c.collection_id,
      publisher_domain: c.publisher_domain,
    });
  }
  for (const m of diff.collections.merged) {
    ev('collection.merged', 'collection', m.rid, {
      collection_rid: m.rid,
      merged_into: m.merged_into,
      publisher_domain: m.publisher_domain,
      identifiers: m.identifiers,
    });
  }
  for (const a of diff.agents_discovered) ev('agent.discovered', 'agent', a.agent_id, { agent_url: a.agent_url, publisher_domain: domain });
  const auth = (a: AuthorizationChange) => ({
    agent_id: a.agent_id,
    agent_url: a.agent_url,
    property_rid: a.property_rid,
    publisher_domain: a.publisher_domain,
    delegation_type: a.delegation_type,
    authorized_for: a.authorized_for,
  });
  for (const a of diff.authorizations.granted) ev('authorization.granted', 'authorization', authorizationId(a), auth(a));
  for (const a of diff.authorizations.modified) ev('authorization.modified', 'authorization', authorizationId(a), auth(a));
  for (const a of diff.authorizations.revoked) ev('authorization.revoked', 'authorization', authorizationId(a), auth(a));
  for (const p of diff.profiles.changed)
    ev('agent.profile_updated', 'agent', p.agent_id, { agent_url: p.agent_url, property_count: p.property_count, publisher_count: p.publisher_count });
  for (const p of diff.profiles.removed) ev('agent.profile_updated', 'agent', p.agent_id, { agent_url: p.agent_url, removed: true });
  return out;
}
