import * as v from 'valibot';
import { defineEndpoint, qInt } from '../../core/endpoint.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import { tierAtLeast } from '../../core/ports/auth.ts';
import { sql } from '../../core/sql.ts';
import { sequenceEvents } from './event-log.ts';
import { toFeedEvent, visibleTo } from './read.ts';
import * as r from '../../lib/response-schemas.ts';

const recentEvent = r.obj({ event_id: r.str, event_type: r.str, entity_type: r.str, entity_id: r.str, payload: r.anyObject, actor: r.str, created_at: r.time });

/**
 * The newest few events, newest first: what the registry's home page shows as recent changes. No
 * cursor and a small page, so it is a glance, not a way to follow the feed. Like the feed it needs a
 * credential (the spec keeps the change feed to authenticated callers), and shows each reader what the
 * feed would (the catalog's visibility rule).
 */
export function recentEndpoint(deps: { db: DatabasePort; ids: IdsPort }) {
  return defineEndpoint({
    method: 'GET',
    path: '/api/registry/feed/recent',
    success: { schema: r.obj({ events: r.arr(recentEvent) }) },
    summary: 'The newest registry events, newest first (at most 20)',
    tags: ['Change feed'],
    auth: 'required',
    query: v.object({ limit: qInt(1, 20, 10) }),
    errors: [400],
    async handler({ query, principal }) {
      await sequenceEvents(deps.db, deps.ids, 5000, { skipIfBusy: true });
      const reader = { member: tierAtLeast(principal!.tier, 'member'), orgId: principal!.orgId };
      const rows = await deps.db.query<Parameters<typeof toFeedEvent>[0]>(sql`
        SELECT event_id::text, event_type, entity_type, entity_id::text, payload, actor, created_at, visibility
        FROM registry_events WHERE true ${visibleTo(reader)}
        ORDER BY event_id DESC LIMIT ${query.limit}::int`);
      return { events: rows.map(toFeedEvent) };
    },
  });
}
