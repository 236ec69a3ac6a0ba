import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { FeedEvent } from '../../core/ports/events.ts';

/**
 * Rebuilds registry data (publishers, properties, collections, agents, authorizations) from feed events, as
 * far as their payloads carry it. Each event is a patch of one row: fields it does not carry stay
 * as they were (or NULL). A page is folded per row first (in event order), then written with two
 * set statements per table; a row is only changed by an event newer than the last one applied to
 * it, so replays (after a 410 re-bootstrap) cannot move data back in time.
 */

type ColumnType = 'text' | 'uuid' | 'boolean' | 'jsonb';
interface TableSpec {
  table: string;
  key: string;
  columns: Record<string, ColumnType>;
  /** Values for columns a new row must have when no event carried them yet. */
  defaults: Record<string, string>;
}

const TABLES = {
  publishers: {
    table: 'mirror_publishers',
    key: 'publisher_id',
    columns: { domain: 'text', source: 'text', adagents_valid: 'boolean' },
    defaults: {},
  },
  properties: {
    table: 'mirror_properties',
    key: 'property_rid',
    columns: { publisher_domain: 'text', property_type: 'text', name: 'text', identifiers: 'jsonb', source: 'text', status: 'text', merged_into: 'uuid' },
    defaults: { status: `'active'` },
  },
  collections: {
    table: 'mirror_collections',
    key: 'collection_rid',
    columns: { collection_id: 'text', publisher_domain: 'text', name: 'text', kind: 'text', distribution: 'jsonb', status: 'text', merged_into: 'uuid' },
    defaults: { status: `'active'` },
  },
  agents: {
    table: 'mirror_agents',
    key: 'agent_id',
    columns: { agent_url: 'text', listed: 'boolean' },
    defaults: { listed: 'true' },
  },
  authorizations: {
    table: 'mirror_authorizations',
    key: 'authorization_id',
    columns: {
      agent_id: 'uuid',
      agent_url: 'text',
      property_rid: 'uuid',
      publisher_domain: 'text',
      delegation_type: 'text',
      authorized_for: 'text',
      active: 'boolean',
    },
    defaults: { active: 'true' },
  },
} satisfies Record<string, TableSpec>;
type TableName = keyof typeof TABLES;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Only values of the column's type are taken: a payload field of another shape is "not carried".
const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
const uuid = (x: unknown) => (typeof x === 'string' && UUID.test(x) ? x.toLowerCase() : undefined);
const bool = (x: unknown) => (typeof x === 'boolean' ? x : undefined);
const list = (x: unknown) => (Array.isArray(x) ? x : undefined);

interface Patch {
  table: TableName;
  key: string;
  fields: Record<string, unknown>;
}

/** The row patch an event implies, or null for events that carry no registry data we keep. */
export function patchFor(e: FeedEvent): Patch | null {
  const p = (e.payload ?? {}) as Record<string, unknown>;
  const entity = uuid(e.entity_id);
  switch (e.event_type) {
    case 'publisher.adagents_discovered':
      return entity ? { table: 'publishers', key: entity, fields: { domain: str(p.domain), source: str(p.source), adagents_valid: true } } : null;
    case 'publisher.adagents_changed':
      return entity ? { table: 'publishers', key: entity, fields: { domain: str(p.domain), source: str(p.source), adagents_valid: bool(p.valid) } } : null;
    case 'property.created':
    case 'property.updated':
    case 'property.stale':
    case 'property.reactivated': {
      const key = uuid(p.property_rid) ?? entity;
      if (!key) return null;
      const status =
        e.event_type === 'property.stale' ? 'stale' : e.event_type === 'property.updated' ? (p.status === 'removed' ? 'removed' : undefined) : 'active';
      return {
        table: 'properties',
        key,
        fields: {
          publisher_domain: str(p.publisher_domain),
          property_type: str(p.property_type) ?? str(p.classification),
          name: str(p.name),
          identifiers: list(p.identifiers),
          source: str(p.source),
          status,
        },
      };
    }
    case 'property.merged': {
      const key = uuid(p.property_rid) ?? entity;
      return key
        ? { table: 'properties', key, fields: { publisher_domain: str(p.publisher_domain), status: 'merged', merged_into: uuid(p.merged_into) } }
        : null;
    }
    case 'collection.created':
    case 'collection.updated':
    case 'collection.removed':
    case 'collection.merged': {
      const key = uuid(p.collection_rid) ?? entity;
      if (!key) return null;
      const status = e.event_type === 'collection.removed' ? 'removed' : e.event_type === 'collection.merged' ? 'merged' : 'active';
      return {
        table: 'collections',
        key,
        fields: {
          collection_id: str(p.collection_id),
          publisher_domain: str(p.publisher_domain),
          name: str(p.name),
          kind: str(p.kind),
          distribution: list(p.distribution),
          status,
          merged_into: e.event_type === 'collection.merged' ? uuid(p.merged_into) : undefined,
        },
      };
    }
    case 'agent.discovered':
    case 'agent.profile_updated':
      return entity
        ? { table: 'agents', key: entity, fields: { agent_url: str(p.agent_url), listed: e.event_type === 'agent.discovered' ? true : undefined } }
        : null;
    case 'agent.removed':
      return entity ? { table: 'agents', key: entity, fields: { agent_url: str(p.agent_url), listed: false } } : null;
    case 'authorization.granted':
    case 'authorization.modified':
    case 'authorization.revoked':
      return entity
        ? {
            table: 'authorizations',
            key: entity,
            fields: {
              agent_id: uuid(p.agent_id),
              agent_url: str(p.agent_url),
              property_rid: uuid(p.property_rid),
              publisher_domain: str(p.publisher_domain),
              delegation_type: str(p.delegation_type),
              authorized_for: str(p.authorized_for),
              active: e.event_type !== 'authorization.revoked',
            },
          }
        : null;
    default:
      return null;
  }
}

/** Apply a page of events (in feed order) to the mirror's registry data tables. */
export async function applyRegistryData(tx: Queryable, events: readonly FeedEvent[]): Promise<void> {
  const folded = new Map<string, { table: TableName; key: string; fields: Record<string, unknown>; last_event_id: string; updated_at: string }>();
  for (const e of events) {
    const patch = patchFor(e);
    if (!patch) continue;
    const id = `${patch.table}|${patch.key}`;
    const row = folded.get(id) ?? { table: patch.table, key: patch.key, fields: {}, last_event_id: e.event_id, updated_at: e.created_at };
    for (const [k, v] of Object.entries(patch.fields)) if (v !== undefined) row.fields[k] = v;
    row.last_event_id = e.event_id;
    row.updated_at = e.created_at;
    folded.set(id, row);
  }
  for (const name of Object.keys(TABLES) as TableName[]) {
    const rows = [...folded.values()].filter((r) => r.table === name);
    if (rows.length)
      await writeRows(
        tx,
        TABLES[name],
        rows.map((r) => ({ key: r.key, ...r.fields, last_event_id: r.last_event_id, updated_at: r.updated_at })),
      );
  }
}

/**
 * Existing rows: fields an event carried replace the stored ones (only when the event is newer).
 * New rows: inserted with the defaults for fields no event carried.
 */
async function writeRows(tx: Queryable, spec: TableSpec, rows: Array<Record<string, unknown>>): Promise<void> {
  const cols = Object.keys(spec.columns);
  const recordType = sql.raw(['key uuid', ...cols.map((c) => `${c} ${spec.columns[c]}`), 'last_event_id uuid', 'updated_at timestamptz'].join(', '));
  const table = sql.raw(spec.table);
  const key = sql.raw(spec.key);
  const set = sql.raw([...cols.map((c) => `${c} = coalesce(r.${c}, t.${c})`), 'last_event_id = r.last_event_id', 'updated_at = r.updated_at'].join(', '));
  await tx.query(sql`
    UPDATE ${table} t SET ${set}
    FROM jsonb_to_recordset(${rows}::jsonb) AS r(${recordType})
    WHERE t.${key} = r.key AND t.last_event_id < r.last_event_id`);
  const insertCols = sql.raw([spec.key, ...cols, 'last_event_id', 'updated_at'].join(', '));
  const values = sql.raw(
    ['r.key', ...cols.map((c) => (spec.defaults[c] ? `coalesce(r.${c}, ${spec.defaults[c]})` : `r.${c}`)), 'r.last_event_id', 'r.updated_at'].join(', '),
  );
  await tx.query(sql`
    INSERT INTO ${table} (${insertCols})
    SELECT ${values} FROM jsonb_to_recordset(${rows}::jsonb) AS r(${recordType})
    ON CONFLICT (${key}) DO NOTHING`);
}
