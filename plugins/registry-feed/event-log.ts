import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { EventLogPort, FeedEvent, NewEvent } from '../../core/ports/events.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import { nextEventId } from './event-id.ts';

/** Per-schema lock key, so suites isolated by schema on one server do not queue behind each other. */
const SEQUENCER_LOCK = sql`hashtext(current_schema() || '.registry_feed.sequencer')`;

/**
 * The writer side: events go to the staging table inside the caller's transaction, so they exist
 * exactly when the change does. No id is taken here; ids come from the sequencer in commit order.
 */
export function createEventLog(clock: ClockPort): EventLogPort {
  return {
    async append(tx: Queryable, events: NewEvent | readonly NewEvent[]) {
      const list = Array.isArray(events) ? (events as readonly NewEvent[]) : [events as NewEvent];
      if (list.length === 0) return;
      const at = clock.now().toISOString();
      const rows = list.map((e) => ({ ...e, visibility: e.visibility ?? 'public', owner_org_id: e.owner_org_id ?? null, created_at: at }));
      await tx.query(stagingInsert(rows));
    },
    async replicate(tx: Queryable, events: readonly FeedEvent[]) {
      if (events.length === 0) return 0;
      const inserted = await tx.query(sql`
        INSERT INTO registry_events (event_id, event_type, entity_type, entity_id, payload, actor, created_at, visibility)
        SELECT r.event_id, r.event_type, r.entity_type, r.entity_id, r.payload, r.actor, r.created_at, coalesce(r.visibility, 'public')
        FROM jsonb_to_recordset(${events}::jsonb)
          AS r(event_id uuid, event_type text, entity_type text, entity_id uuid, payload jsonb, actor text, created_at timestamptz, visibility text)
        ON CONFLICT (event_id) DO NOTHING
        RETURNING 1 AS x`);
      return inserted.length;
    },
  };
}

function stagingInsert(rows: unknown[]) {
  // WITH ORDINALITY keeps the caller's order, so one transaction's events keep their order in the feed.
  return sql`
    INSERT INTO registry_event_staging (event_type, entity_type, entity_id, payload, actor, created_at, visibility, owner_org_id)
    SELECT r.event_type, r.entity_type, r.entity_id, r.payload, r.actor, r.created_at, r.visibility, r.owner_org_id
    FROM jsonb_array_elements(${rows}::jsonb) WITH ORDINALITY AS e(doc, n)
    CROSS JOIN LATERAL jsonb_to_record(e.doc)
      AS r(event_type text, entity_type text, entity_id uuid, payload jsonb, actor text, created_at timestamptz, visibility text, owner_org_id uuid)
    ORDER BY e.n`;
}

interface StagedRow {
  seq: string;
  event_type: string;
  entity_type: string;
  entity_id: string;
  payload: unknown;
  actor: string;
  created_at: string | Date;
  visibility: string;
  owner_org_id: string | null;
}

/**
 * Move committed staged events into the feed, at most `batch` per transaction, until none are
 * left. Under a transaction-level advisory lock: one sequencer at a time per database, and the
 * lock is released only after commit, so the next sequencer reads a max(event_id) that includes
 * every id handed out before it. Returns the number of events moved.
 */
export async function sequenceEvents(db: DatabasePort, ids: IdsPort, batch = 5000, options: { skipIfBusy?: boolean } = {}): Promise<number> {
  let total = 0;
  if (options.skipIfBusy) {
    // Cheap exit for readers when nothing waits (the common case on a read-heavy feed).
    const [waiting] = await db.query<{ any: boolean }>(sql`SELECT EXISTS (SELECT 1 FROM registry_event_staging) AS any`);
    if (!waiting?.any) return 0;
  }
  for (;;) {
    const moved = await db.transaction(async (tx) => {
      if (options.skipIfBusy) {
        // Another sequencer is at work: its ids will be above everything visible now, so reading
        // without waiting for it can only show fewer events, never skip one.
        const [got] = await tx.query<{ ok: boolean }>(sql`SELECT pg_try_advisory_xact_lock(${SEQUENCER_LOCK}) AS ok`);
        if (!got?.ok) return -1;
      } else {
        await tx.query(sql`SELECT pg_advisory_xact_lock(${SEQUENCER_LOCK})`);
      }
      const staged = await tx.query<StagedRow>(sql`
        WITH moved AS (
          DELETE FROM registry_event_staging
          WHERE seq IN (SELECT seq FROM registry_event_staging ORDER BY seq LIMIT ${batch}::int)
          RETURNING *
        )
        SELECT seq::text, event_type, entity_type, entity_id::text, payload, actor, created_at, visibility, owner_org_id::text FROM moved ORDER BY moved.seq`);
      if (staged.length === 0) return 0;
      const [top] = await tx.query<{ max: string | null }>(sql`SELECT event_id::text AS max FROM registry_events ORDER BY event_id DESC LIMIT 1`);
      let last = top?.max ?? null;
      const rows = staged.map((s) => {
        last = nextEventId(last, ids.uuid7());
        return {
          event_id: last,
          event_type: s.event_type,
          entity_type: s.entity_type,
          entity_id: s.entity_id,
          payload: s.payload,
          actor: s.actor,
          created_at: new Date(s.created_at).toISOString(),
          visibility: s.visibility,
          owner_org_id: s.owner_org_id,
        };
      });
      await tx.query(sql`
        INSERT INTO registry_events (event_id, event_type, entity_type, entity_id, payload, actor, created_at, visibility, owner_org_id)
        SELECT r.event_id, r.event_type, r.entity_type, r.entity_id, r.payload, r.actor, r.created_at, r.visibility, r.owner_org_id
        FROM jsonb_to_recordset(${rows}::jsonb)
          AS r(event_id uuid, event_type text, entity_type text, entity_id uuid, payload jsonb, actor text, created_at timestamptz, visibility text, owner_org_id uuid)`);
      return staged.length;
    });
    if (moved < 0) return total;
    total += moved;
    if (moved < batch) return total;
  }
}
