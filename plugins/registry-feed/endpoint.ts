import * as v from 'valibot';
import { defineEndpoint, qCsv, qInt } from '../../core/endpoint.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import { tierAtLeast } from '../../core/ports/auth.ts';
import { sequenceEvents } from './event-log.ts';
import { readFeed, TYPE_PATTERN } from './read.ts';
import * as r from '../../lib/response-schemas.ts';

const feedEvent = r.obj({
  event_id: r.str,
  event_type: r.str,
  entity_type: r.str,
  entity_id: r.str,
  payload: r.anyObject,
  actor: r.str,
  created_at: r.time,
});
const feedPage = r.obj({
  events: r.arr(feedEvent),
  cursor: r.nul(r.str),
  has_more: r.bool,
  freshness: r.obj({ generated_at: r.time, latest_event_created_at: r.nul(r.time), lag_seconds: r.num, retention_days: r.int }),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const query = v.object({
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.regex(UUID, 'must be an event id (UUID)'),
      v.transform((s) => s.toLowerCase()),
    ),
  ),
  types: v.pipe(
    qCsv(50, 100),
    v.check((xs) => !xs || xs.every((t) => TYPE_PATTERN.test(t)), 'each type must match ^[a-z][a-z0-9_.]*\\*?$ (a trailing * is a prefix glob)'),
  ),
  limit: qInt(1, 10_000, 100),
});

export function feedEndpoint(deps: { db: DatabasePort; clock: ClockPort; ids: IdsPort }) {
  return defineEndpoint({
    method: 'GET',
    path: '/api/registry/feed',
    tool: 'read_feed',
    success: { schema: feedPage },
    summary: 'Change feed: registry events after a cursor',
    description:
      "Events in event_id order, filtered by the caller's standing as the agent catalog is (members_only events for member keys, private ones for the owner). Pass the returned cursor to continue; when has_more is false, poll later with the same cursor. " +
      'An unknown cursor or one older than 90 days answers 410 cursor_expired.',
    tags: ['Change feed'],
    auth: 'required',
    query,
    errors: [400, 401, 410],
    async handler({ query, principal }) {
      // Events of members_only and private agents are filtered exactly as the catalog filters the agents.
      const reader = { member: tierAtLeast(principal!.tier, 'member'), orgId: principal!.orgId };
      // Make every committed event visible before reading (see event-log.ts for why this is gap-free).
      return readFeed(deps.db, { cursor: query.cursor, types: query.types, limit: query.limit ?? 100, reader }, deps.clock.now(), () =>
        sequenceEvents(deps.db, deps.ids, 5000, { skipIfBusy: true }),
      );
    },
  });
}
