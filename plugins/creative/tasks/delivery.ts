import * as v from 'valibot';
import { sql } from '../../../core/sql.ts';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import type { CreativeStorePort } from '../../../core/ports/creative-store.ts';
import type { CreativeContext } from '../context.ts';

const ids = (max: number) =>
  v.pipe(
    v.array(v.pipe(v.string('must be a string'), v.minLength(1), v.maxLength(128)), 'must be an array of ids'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(max),
  );
const day = v.pipe(
  v.string('must be a string'),
  v.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD'),
  // Calendar days only: 2026-02-30 does not survive the round trip.
  v.check((d) => !Number.isNaN(Date.parse(d)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'must be a valid date'),
);

const DAY_MS = 86_400_000;

/**
 * get_creative_delivery: what the impression and click trackers of this agent's serving tags
 * recorded, per creative (and media buy), one variant per serving tag. The ad server bills out of
 * band, so no spend is reported.
 */
export function creativeDeliveryTask(ctx: CreativeContext, store: () => CreativeStorePort | undefined) {
  return defineTask({
    name: 'get_creative_delivery',
    description:
      'Delivery of your library creatives served through this agent (impressions and clicks its trackers recorded), per creative and media buy, one variant per serving tag. Filter by media_buy_ids or creative_ids; start_date/end_date (UTC days).',
    protocol: 'creative',
    input: v.pipe(
      v.object({
        account: v.optional(v.looseObject({}, 'must be an account reference')),
        media_buy_ids: v.optional(ids(100)),
        creative_ids: v.optional(ids(500)),
        start_date: v.optional(day),
        end_date: v.optional(day),
        max_variants: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'))),
        pagination: v.optional(
          v.object({ max_results: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))), cursor: v.optional(v.string()) }),
        ),
      }),
      v.forward(
        v.check((i) => !!i.media_buy_ids || !!i.creative_ids, 'send media_buy_ids or creative_ids'),
        ['media_buy_ids'],
      ),
    ),
    async handler({ input, principal, clock }) {
      const library = store();
      if (!library) throw new ProtocolError('UNSUPPORTED_FEATURE', 'This creative agent has no creative library', { field: 'creative_ids' });
      const owner = principal.orgId;
      // A sandbox fixture account id (null) narrows nothing: still only the caller's tags.
      const accountId = (input.account ? await library.accountId(owner, input.account, 'account') : undefined) ?? undefined;
      const now = clock.now();
      const start = input.start_date ? new Date(`${input.start_date}T00:00:00Z`) : null;
      const end = input.end_date ? new Date(new Date(`${input.end_date}T00:00:00Z`).getTime() + DAY_MS - 1000) : now;
      if (start && start > end) throw new ProtocolError('INVALID_REQUEST', 'start_date: must not be after end_date', { field: 'start_date' });
      const rows = await ctx.db.query<{
        id: string;
        creative_id: string;
        media_buy_id: string | null;
        format_id: { agent_url: string; id: string };
        created_at: Date;
        impressions: number;
        clicks: number;
      }>(sql`
        SELECT t.id, t.creative_id, t.media_buy_id, t.format_id, t.created_at,
          count(*) FILTER (WHERE e.kind = 'impression')::int AS impressions, count(*) FILTER (WHERE e.kind = 'click')::int AS clicks
        FROM creative_serving_tags t
        LEFT JOIN creative_delivery_events e ON e.tag_id = t.id AND e.occurred_at <= ${end}::timestamptz
          ${start ? sql`AND e.occurred_at >= ${start}::timestamptz` : sql.empty}
        WHERE t.owner = ${owner}::text
          ${accountId ? sql`AND t.account_id = ${accountId}::text` : sql.empty}
          ${input.media_buy_ids ? sql`AND t.media_buy_id = ANY(${input.media_buy_ids}::text[])` : sql.empty}
          ${input.creative_ids ? sql`AND t.creative_id = ANY(${input.creative_ids}::text[])` : sql.empty}
        GROUP BY t.id ORDER BY t.creative_id, t.media_buy_id NULLS FIRST, t.created_at, t.id`);
      const groups = new Map<string, typeof rows>();
      for (const r of rows) {
        const key = `${r.creative_id}\n${r.media_buy_id ?? ''}`;
        (groups.get(key) ?? groups.set(key, []).get(key)!).push(r);
      }
      const metrics = (impressions: number, clicks: number): Json => ({
        impressions,
        clicks,
        ...(impressions > 0 ? { ctr: Math.round((clicks / impressions) * 1e6) / 1e6 } : {}),
      });
      const creatives: Json[] = [...groups.values()].map((tags) => {
        const first = tags[0]!;
        const impressions = tags.reduce((n, t) => n + t.impressions, 0);
        const clicks = tags.reduce((n, t) => n + t.clicks, 0);
        const out: Json = {
          creative_id: first.creative_id,
          format_id: first.format_id,
          totals: metrics(impressions, clicks),
          variant_count: tags.length,
          variants: tags.slice(0, input.max_variants ?? tags.length).map((t) => ({ variant_id: t.id, ...metrics(t.impressions, t.clicks) })),
        };
        if (first.media_buy_id) out.media_buy_id = first.media_buy_id;
        return out;
      });
      const earliest = rows.reduce<Date | null>((d, r) => (!d || new Date(r.created_at) < d ? new Date(r.created_at) : d), null);
      const body: Json = {
        reporting_period: { start: (start ?? earliest ?? end).toISOString(), end: end.toISOString(), timezone: 'UTC' },
        currency: 'USD',
        creatives,
      };
      if (accountId) body.account_id = accountId;
      if (input.media_buy_ids?.length === 1) body.media_buy_id = input.media_buy_ids[0]!;
      return body;
    },
  });
}
