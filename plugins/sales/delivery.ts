import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';
import type { ReportWindows } from '../../core/ports/ad-server.ts';
import { accountRef, date, versionFields } from '../../lib/adcp/request-fields.ts';
import { figures } from './reports.ts';
import type { BuyListings, BuysFilter } from './buys/listing.ts';
import { partition } from './windows.ts';
import { requireAdServer } from './upstream.ts';
import { cents } from './money.ts';

const STATUSES = ['pending_creatives', 'pending_start', 'active', 'paused', 'completed', 'rejected', 'canceled'] as const;
const status = v.picklist(STATUSES, `must be one of ${STATUSES.join(', ')}`);
const DAY = 86_400_000;

export function getMediaBuyDeliveryTask(deps: SalesDeps, listings: BuyListings) {
  return defineTask({
    name: 'get_media_buy_delivery',
    description:
      "Delivery of the caller's media buys (impressions, spend, clicks) in totals and by package, over a date range or the whole flight, with aggregated totals; time_granularity + include_window_breakdown return the windows reporting_webhook would have sent (recover missed fires).",
    protocol: 'media_buy',
    input: v.pipe(
      v.object({
        ...versionFields,
        account: v.optional(accountRef),
        media_buy_ids: v.optional(
          v.pipe(v.array(v.pipe(v.string(), v.maxLength(128))), v.minLength(1, 'must not be empty'), v.maxLength(100, 'accepts at most 100 ids')),
        ),
        status_filter: v.optional(v.union([status, v.pipe(v.array(status), v.minLength(1))], `must be a status or an array of ${STATUSES.join(', ')}`)),
        start_date: v.optional(date),
        end_date: v.optional(date),
        time_granularity: v.optional(v.picklist(['hourly', 'daily', 'monthly'], 'must be hourly, daily or monthly')),
        include_window_breakdown: v.optional(v.boolean()),
        include_package_daily_breakdown: v.optional(v.boolean()),
        attribution_window: v.optional(v.record(v.string(), v.unknown())),
        reporting_dimensions: v.optional(v.record(v.string(), v.unknown())),
      }),
      v.forward(
        v.check((i) => !i.start_date || !i.end_date || i.start_date <= i.end_date, 'must not be before start_date'),
        ['end_date'],
      ),
    ),
    async handler({ input, principal, clock }) {
      const owner = principal.orgId;
      await requireAdServer(deps, principal.id, 'get_media_buy_delivery');
      const granularities = deps.adServer.reporting.granularities;
      if (input.time_granularity && !granularities.includes(input.time_granularity)) {
        throw new ProtocolError(
          'UNSUPPORTED_GRANULARITY',
          `time_granularity: ${input.time_granularity} is not offered; use one of ${granularities.join(', ')}`,
          { field: 'time_granularity' },
        );
      }
      const account = input.account ? await deps.accounts.resolve(deps.db, owner, input.account) : undefined;
      const statuses = input.status_filter === undefined ? undefined : Array.isArray(input.status_filter) ? input.status_filter : [input.status_filter];
      const now = clock.now();
      // Buys named by id: the ad server's reads start now, beside the listing (one round trip of
      // latency, not two); each gets its windows once the listing gives the reporting period.
      const early = new Map(
        (input.media_buy_ids ?? []).map((id) => {
          const windows = Promise.withResolvers<ReportWindows>();
          const report = deps.adServer.report(deps.db, id, windows.promise, now);
          // Awaited only if listed; a failure is the listing's or reported there.
          report.catch(() => {});
          return [id, { windows, report }] as const;
        }),
      );
      try {
        return await respond();
      } finally {
        // The ids not listed (filtered out, not the caller's, or the call failed) want no window.
        for (const { windows } of early.values()) windows.resolve([]);
      }
      async function respond(): Promise<Json> {
        const filters: BuysFilter[] = ['confirmed'];
        if (account) filters.push('account');
        if (input.media_buy_ids) filters.push('ids');
        if (statuses) filters.push('statuses');
        const listed = (
          await listings.read('delivered', filters, {
            owner,
            account_id: account?.account_id ?? null,
            ids: input.media_buy_ids ?? null,
            statuses: statuses ?? null,
            limit: 100,
            offset: 0,
          })
        ).buys;
        const buys = listed.map((l) => l.buy);
        if (input.media_buy_ids) {
          const found = new Set(buys.map((b) => b.media_buy_id));
          const missing = input.media_buy_ids.find((id) => !found.has(id));
          if (missing !== undefined && !statuses) {
            throw new ProtocolError('MEDIA_BUY_NOT_FOUND', `No media buy ${missing.slice(0, 128)} for this caller`, { status: 404, field: 'media_buy_ids' });
          }
        }
        // The reporting period: the requested dates (UTC days), else the flights so far.
        const from = input.start_date
          ? new Date(`${input.start_date}T00:00:00Z`)
          : new Date(Math.min(now.getTime(), ...buys.map((b) => (b.started_at ?? b.start_time).getTime())));
        const until = input.end_date
          ? new Date(new Date(`${input.end_date}T00:00:00Z`).getTime() + DAY)
          : new Date(Math.max(from.getTime(), Math.min(now.getTime(), Math.max(0, ...buys.map((b) => (b.ended_at ?? b.end_time).getTime())))));
        const currency = buys[0]?.currency ?? 'USD';
        const aggregate = { impressions: 0, spend: 0, clicks: 0, media_buy_count: 0 };
        const deliveries: Json[] = [];
        const windows = input.time_granularity && input.include_window_breakdown ? partition(from, until, input.time_granularity) : [];
        // Every buy's report at once: the ad server may answer them together.
        const asked: ReportWindows = [{ start: from, end: until }, ...windows];
        const reports = await Promise.all(
          buys.map((b) => {
            const started = early.get(b.media_buy_id);
            if (!started) return deps.adServer.report(deps.db, b.media_buy_id, asked, now);
            started.windows.resolve(asked);
            return started.report;
          }),
        );
        for (const [n, { buy: b, packages: pkgs }] of listed.entries()) {
          const reps = reports[n]!;
          const { totals, byPackage } = figures(pkgs, reps[0]!);
          const delivery: Json = { media_buy_id: b.media_buy_id, status: b.status, totals, by_package: byPackage };
          if (windows.length) {
            delivery.windows = windows.map((w, i) => {
              const f = figures(pkgs, reps[i + 1]!);
              return {
                window_start: w.start.toISOString(),
                window_end: w.end.toISOString(),
                totals: f.totals,
                by_package: f.byPackage.map(({ package_id, impressions, spend, clicks }) => ({ package_id, impressions, spend, clicks })),
                is_final: reps[i + 1]!.ready,
              };
            });
          }
          if (b.currency === currency) {
            aggregate.impressions += totals.impressions as number;
            aggregate.spend += totals.spend as number;
            aggregate.clicks += (totals.clicks as number) ?? 0;
            aggregate.media_buy_count++;
          }
          deliveries.push(delivery);
        }
        const body: Json = {
          reporting_period: { start: from.toISOString(), end: until.toISOString() },
          currency,
          aggregated_totals: { ...aggregate, spend: cents(aggregate.spend) },
          media_buy_deliveries: deliveries,
        };
        if (deps.options.sandbox) body.sandbox = true;
        return body;
      }
    },
  });
}
