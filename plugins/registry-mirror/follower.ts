import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { EventLogPort, FeedEvent } from '../../core/ports/events.ts';
import type { Logger } from '../../core/log.ts';
import { applyRegistryData } from './registry-data.ts';

export interface FollowOptions {
  /** Base URL of the upstream registry. */
  from: string;
  /** Upstream API key (the feed needs auth). */
  key: string;
  pageSize: number;
  /** Listing endpoints snapshotted when the cursor expires (paths on the upstream). */
  listings: readonly string[];
  /** Per-request timeout. */
  timeoutMs: number;
}

export interface FollowStep {
  received: number;
  applied: number;
  hasMore: boolean;
  bootstrapped: boolean;
}

interface FeedPage {
  events: FeedEvent[];
  cursor: string | null;
  has_more: boolean;
}

export class UpstreamError extends Error {
  override name = 'UpstreamError';
}

/**
 * Follows another registry's change feed into this database: each page is applied in one
 * transaction together with the new cursor and the registry data its payloads carry
 * (registry-data.ts), so a restart resumes exactly where the last commit
 * left off (no event skipped, none applied twice). Events keep their upstream ids, so this
 * instance serves an identical feed. A 410 (cursor expired) snapshots the listings and restarts
 * the copy from the upstream's earliest event.
 *
 * The upstream URL is operator configuration, not user input, so it is fetched directly rather
 * than through the SSRF-guarded crawler (a mirror often follows a registry on a private network).
 */
export class FeedFollower {
  readonly source: string;

  constructor(
    private readonly db: DatabasePort,
    private readonly events: EventLogPort,
    private readonly options: FollowOptions,
    private readonly logger: Logger,
  ) {
    this.source = options.from.replace(/\/+$/, '');
  }

  private async get(path: string): Promise<Response> {
    try {
      return await fetch(`${this.source}${path}`, {
        headers: { authorization: `Bearer ${this.options.key}`, accept: 'application/json' },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw new UpstreamError(`${path}: ${(error as Error).message}`);
    }
  }

  async cursor(): Promise<string | null> {
    await this.db.query(sql`INSERT INTO mirror_state (source) VALUES (${this.source}::text) ON CONFLICT (source) DO NOTHING`);
    const [row] = await this.db.query<{ cursor: string | null }>(sql`SELECT cursor::text FROM mirror_state WHERE source = ${this.source}::text`);
    return row?.cursor ?? null;
  }

  /** Fetch and apply one page. */
  async step(): Promise<FollowStep> {
    const cursor = await this.cursor();
    const qs = `limit=${this.options.pageSize}${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await this.get(`/api/registry/feed?${qs}`);
    if (res.status === 410) {
      await res.body?.cancel();
      await this.bootstrap();
      return { received: 0, applied: 0, hasMore: true, bootstrapped: true };
    }
    if (res.status !== 200) {
      const text = (await res.text()).slice(0, 300);
      throw new UpstreamError(`feed answered HTTP ${res.status}: ${text}`);
    }
    const page = (await res.json()) as FeedPage;
    if (!Array.isArray(page.events)) throw new UpstreamError('feed page without events');
    const applied = await this.apply(page, cursor);
    return { received: page.events.length, applied, hasMore: page.has_more, bootstrapped: false };
  }

  private async apply(page: FeedPage, expectedCursor: string | null): Promise<number> {
    return this.db.transaction(async (tx) => {
      // Another follower of the same source may have moved on meanwhile: then this page is stale.
      const [state] = await tx.query<{ cursor: string | null }>(sql`SELECT cursor::text FROM mirror_state WHERE source = ${this.source}::text FOR UPDATE`);
      if ((state?.cursor ?? null) !== expectedCursor) return 0;
      let applied = 0;
      if (page.events.length) {
        applied = await this.events.replicate(tx, page.events);
        // Latest state per entity: the page is in event order, so the last event of an entity wins.
        const latest = new Map<string, FeedEvent>();
        for (const e of page.events) latest.set(`${e.entity_type}|${e.entity_id}`, e);
        await tx.query(sql`
          INSERT INTO mirror_entities (entity_type, entity_id, last_event_id, last_event_type, payload, updated_at)
          SELECT r.entity_type, r.entity_id, r.event_id, r.event_type, r.payload, r.created_at
          FROM jsonb_to_recordset(${[...latest.values()]}::jsonb)
            AS r(event_id uuid, event_type text, entity_type text, entity_id uuid, payload jsonb, created_at timestamptz)
          ON CONFLICT (entity_type, entity_id) DO UPDATE SET last_event_id = EXCLUDED.last_event_id, last_event_type = EXCLUDED.last_event_type,
            payload = EXCLUDED.payload, updated_at = EXCLUDED.updated_at
          WHERE mirror_entities.last_event_id < EXCLUDED.last_event_id`);
        await applyRegistryData(tx, page.events);
      }
      await tx.query(sql`
        UPDATE mirror_state SET cursor = ${page.cursor}::uuid, events_received = events_received + ${page.events.length}::int,
          events_applied = events_applied + ${applied}::int, updated_at = now()
        WHERE source = ${this.source}::text`);
      return applied;
    });
  }

  /**
   * The cursor expired upstream: snapshot the listing endpoints (what exists now) and follow the
   * feed again from the upstream's earliest retained event. Events already copied stay (their ids
   * are stable); entity states are refreshed as events arrive.
   */
  async bootstrap(): Promise<void> {
    this.logger.warn({ source: this.source }, 'mirror cursor expired upstream (410): re-bootstrapping from the listings');
    const snapshots: Array<{ listing: string; status: number; document: unknown }> = [];
    for (const listing of this.options.listings) {
      const res = await this.get(listing);
      let document: unknown = null;
      if (res.ok) document = await res.json().catch(() => null);
      else await res.body?.cancel();
      snapshots.push({ listing, status: res.status, document });
    }
    await this.db.transaction(async (tx) => {
      for (const s of snapshots) {
        await tx.query(sql`
          INSERT INTO mirror_snapshots (source, listing, document, status, taken_at)
          VALUES (${this.source}::text, ${s.listing}::text, ${s.document}::jsonb, ${s.status}::int, now())
          ON CONFLICT (source, listing) DO UPDATE SET document = EXCLUDED.document, status = EXCLUDED.status, taken_at = EXCLUDED.taken_at`);
      }
      await tx.query(sql`
        UPDATE mirror_state SET cursor = NULL, bootstraps = bootstraps + 1, last_bootstrap_at = now(), updated_at = now()
        WHERE source = ${this.source}::text`);
    });
  }

  /** Follow until caught up (has_more false); returns the events received. */
  async catchUp(): Promise<number> {
    let total = 0;
    for (;;) {
      const step = await this.step();
      total += step.received;
      if (!step.hasMore) return total;
    }
  }
}
