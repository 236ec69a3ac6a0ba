import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import type { HttpRoute } from '../../core/http.ts';
import type { BuyerDataDeps } from './deps.ts';
import { storeEvents } from './conversions.ts';
import { PIXEL_HEADERS, TRANSPARENT_GIF } from '../../lib/tracking-pixel.ts';

const PIXEL_ID = /^px_[0-9a-f]{32}$/;

const query = v.object({
  event_type: v.pipe(v.string('is required'), v.regex(/^[a-z_]{1,64}$/, 'must be an event type')),
  event_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  value: v.optional(v.pipe(v.string(), v.regex(/^\d{1,9}(\.\d{1,4})?$/, 'must be a non-negative amount'))),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'))),
});

function fromAllowedSite(referer: string | null, domains: readonly string[]): boolean {
  if (!referer || !URL.canParse(referer)) return false;
  const host = new URL(referer).hostname.toLowerCase();
  return domains.some((d) => host === d.toLowerCase() || host.endsWith(`.${d.toLowerCase()}`));
}

const refuse = (status: number, message: string) =>
  Response.json({ error: status === 404 ? 'not_found' : status === 403 ? 'forbidden' : 'invalid_request', message }, { status });

/**
 * `GET /events/pixel/{pixel_id}?event_type=&event_id=&value=&currency=`: the conversion pixel of an
 * event source (its sync_event_sources snippet). A hit is one event at the time it arrives, stored and
 * attributed as log_event's are; the same event_id again is the same event. Without an event_id each hit
 * is a new event. A source with allowed_domains takes hits whose Referer is one of its sites only (403
 * otherwise). Unknown pixels are 404 and bad parameters 400: nothing is recorded.
 */
export function pixelRoute(deps: BuyerDataDeps): HttpRoute {
  return {
    method: 'GET',
    path: '/events/pixel/{pixel}',
    async handle(request, { params }) {
      const pixel = params.pixel ?? '';
      if (!PIXEL_ID.test(pixel)) return refuse(404, 'No such pixel');
      const parsed = v.safeParse(query, Object.fromEntries(new URL(request.url).searchParams));
      if (!parsed.success) {
        const issue = parsed.issues[0];
        return refuse(400, `${v.getDotPath(issue) ?? 'query'}: ${issue.message}`);
      }
      const q = parsed.output;
      const [source] = await deps.db.query<{
        owner: string;
        event_source_id: string;
        account_id: string;
        event_types: string[] | null;
        allowed_domains: string[] | null;
      }>(sql`SELECT owner, event_source_id, account_id, event_types, allowed_domains FROM sales_event_sources WHERE pixel_id = ${pixel}::text`);
      if (!source) return refuse(404, 'No such pixel');
      // A source that names its sites takes hits from pages of those sites only (the page's Referer).
      if (source.allowed_domains?.length && !fromAllowedSite(request.headers.get('referer'), source.allowed_domains))
        return refuse(403, "This pixel fires from the event source's allowed_domains only");
      if (source.event_types && !source.event_types.includes(q.event_type))
        return refuse(400, `event_type: ${q.event_type} is not tracked by this event source`);
      const now = deps.clock.now();
      await storeEvents(
        deps,
        null,
        source.owner,
        source,
        [
          {
            event_id: q.event_id ?? `px-${deps.ids.uuid7()}`,
            event_type: q.event_type,
            event_time: now.toISOString(),
            value: q.value !== undefined ? Number(q.value) : null,
            currency: q.currency ?? null,
          },
        ],
        false,
        now,
      );
      return new Response(TRANSPARENT_GIF, { headers: PIXEL_HEADERS });
    },
  };
}
