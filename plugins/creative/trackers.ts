import { sql } from '../../core/sql.ts';
import type { HttpRoute } from '../../core/http.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import { PIXEL_HEADERS, TRANSPARENT_GIF } from '../../lib/tracking-pixel.ts';

const TAG_ID = /^[A-Za-z0-9_-]{32}$/;

/**
 * `GET /creative-track/{tag}/impression` (a 1x1 GIF) and `/click` (a redirect to the creative's
 * landing page): each hit of a tag this agent served is one row, so every instance records it and
 * get_creative_delivery counts them. Unknown tags are 404 and record nothing.
 */
export function trackerRoute(db: Queryable, clock: ClockPort): HttpRoute {
  return {
    method: 'GET',
    path: '/creative-track/{tag}/{kind}',
    async handle(_request, { params }) {
      const tag = params.tag ?? '';
      const kind = params.kind;
      if (!TAG_ID.test(tag) || (kind !== 'impression' && kind !== 'click'))
        return Response.json({ error: 'not_found', message: 'No such tracker' }, { status: 404 });
      const [hit] = await db.query<{ landing_url: string | null }>(sql`
        WITH t AS (SELECT id, landing_url FROM creative_serving_tags WHERE id = ${tag}::text),
        e AS (INSERT INTO creative_delivery_events (tag_id, kind, occurred_at) SELECT id, ${kind}::text, ${clock.now()}::timestamptz FROM t)
        SELECT landing_url FROM t`);
      if (!hit) return Response.json({ error: 'not_found', message: 'No such tracker' }, { status: 404 });
      const headers = { 'cache-control': 'no-store', 'cross-origin-resource-policy': 'cross-origin' };
      if (kind === 'impression') return new Response(TRANSPARENT_GIF, { headers: PIXEL_HEADERS });
      return hit.landing_url
        ? new Response(null, { status: 302, headers: { ...headers, location: hit.landing_url } })
        : new Response(null, { status: 204, headers });
    },
  };
}
