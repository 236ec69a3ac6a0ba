import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { FeedEvent } from '../../core/ports/events.ts';

export const RETENTION_DAYS = 90;
export const TYPE_PATTERN = /^[a-z][a-z0-9_.]*\*?$/;

/** The reader's standing, as the catalog applies it. */
export interface FeedReader {
  /** Member or admin tier: reads members_only events. */
  member: boolean;
  /** Reads the private events of this organization. */
  orgId: string | null;
}

export interface FeedQuery {
  cursor?: string;
  /** Whose standing filters the page; absent only for trusted internal reads (every event). */
  reader?: FeedReader;
  /** Exact types and prefix globs (`property.*`). */
  types?: readonly string[];
  limit: number;
}

export interface FeedPage {
  events: FeedEvent[];
  cursor: string | null;
  has_more: boolean;
  freshness: {
    generated_at: string;
    latest_event_created_at: string | null;
    /** Seconds the oldest committed event still waiting for an id has waited (0 when none). */
    lag_seconds: number;
    retention_days: number;
  };
}

export interface EventRow {
  event_id: string;
  event_type: string;
  entity_type: string;
  entity_id: string;
  payload: Record<string, unknown>;
  actor: string;
  created_at: string | Date;
  visibility: string;
}

const iso = (d: string | Date) => new Date(d).toISOString();

export function toFeedEvent(r: EventRow): FeedEvent {
  const event: FeedEvent = {
    event_id: r.event_id,
    event_type: r.event_type,
    entity_type: r.entity_type,
    entity_id: r.entity_id,
    payload: r.payload,
    actor: r.actor,
    created_at: iso(r.created_at),
  };
  // Restricted events say so, so a mirror keeps them restricted.
  if (r.visibility === 'members_only' || r.visibility === 'private') event.visibility = r.visibility;
  return event;
}

/** Events the reader may see: public, members_only for members, private for the owning organization. */
export function visibleTo(reader: FeedReader | undefined) {
  if (!reader) return sql.empty;
  return sql`AND (visibility = 'public' OR (${reader.member}::boolean AND visibility = 'members_only') OR owner_org_id = ${reader.orgId}::uuid)`;
}

function typeFilter(types: readonly string[] | undefined) {
  if (!types?.length) return sql.empty;
  const exact = types.filter((t) => !t.endsWith('*'));
  const prefixes = types.filter((t) => t.endsWith('*')).map((t) => t.slice(0, -1));
  const parts = [];
  if (exact.length) parts.push(sql`event_type = ANY(${exact}::text[])`);
  // starts_with, not LIKE: `_` in a type name is a literal, not a wildcard.
  if (prefixes.length) parts.push(sql`EXISTS (SELECT 1 FROM unnest(${prefixes}::text[]) AS p(prefix) WHERE starts_with(event_type, p.prefix))`);
  return sql`AND (${sql.join(parts, ' OR ')})`;
}

/**
 * One page of the feed after `cursor`. An unknown cursor, or one whose event is older than the
 * retention window, is 410 `cursor_expired`: the caller must rebuild from the listings.
 * `beforeRead` runs once the cursor is known good (the endpoint sequences committed events
 * there, so a refused read moves nothing).
 */
export async function readFeed(db: Queryable, query: FeedQuery, now: Date, beforeRead?: () => Promise<unknown>): Promise<FeedPage> {
  if (query.cursor) {
    const [known] = await db.query<{ created_at: string | Date }>(sql`SELECT created_at FROM registry_events WHERE event_id = ${query.cursor}::uuid`);
    const cutoff = now.getTime() - RETENTION_DAYS * 86_400_000;
    if (!known || new Date(known.created_at).getTime() < cutoff) {
      throw new ProtocolError(
        'CURSOR_EXPIRED',
        `Cursor ${query.cursor} is unknown or older than ${RETENTION_DAYS} days; rebuild from the agent search, catalog and collection endpoints, then follow the feed from its start`,
        { status: 410 },
      );
    }
  }
  await beforeRead?.();
  const after = query.cursor ? sql`AND event_id > ${query.cursor}::uuid` : sql.empty;
  const rows = await db.query<EventRow>(sql`
    SELECT event_id::text, event_type, entity_type, entity_id::text, payload, actor, created_at, visibility
    FROM registry_events
    WHERE true ${after} ${typeFilter(query.types)} ${visibleTo(query.reader)}
    ORDER BY event_id
    LIMIT ${query.limit + 1}::int`);
  const has_more = rows.length > query.limit;
  const events = rows.slice(0, query.limit).map(toFeedEvent);
  const [latest] = await db.query<{ created_at: string | Date }>(sql`SELECT created_at FROM registry_events ORDER BY event_id DESC LIMIT 1`);
  const [waiting] = await db.query<{ oldest: string | Date | null }>(sql`SELECT min(created_at) AS oldest FROM registry_event_staging`);
  const lag = waiting?.oldest ? Math.max(0, (now.getTime() - new Date(waiting.oldest).getTime()) / 1000) : 0;
  return {
    events,
    cursor: events.length ? events[events.length - 1]!.event_id : (query.cursor ?? null),
    has_more,
    freshness: {
      generated_at: now.toISOString(),
      latest_event_created_at: latest ? iso(latest.created_at) : null,
      lag_seconds: Math.round(lag * 1000) / 1000,
      retention_days: RETENTION_DAYS,
    },
  };
}

/** Delete events older than the retention window, `batch` rows per statement; returns the count. */
export async function pruneEvents(db: Queryable, now: Date, options: { days?: number; batch?: number } = {}): Promise<number> {
  const cutoff = new Date(now.getTime() - (options.days ?? RETENTION_DAYS) * 86_400_000);
  const batch = options.batch ?? 5000;
  let total = 0;
  for (;;) {
    const deleted = await db.query(sql`
      DELETE FROM registry_events
      WHERE event_id IN (
        SELECT event_id FROM registry_events WHERE created_at < ${cutoff}::timestamptz ORDER BY event_id LIMIT ${batch}::int
      )
      RETURNING 1 AS x`);
    total += deleted.length;
    if (deleted.length < batch) return total;
  }
}
