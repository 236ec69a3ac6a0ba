import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { AdServer, type AdServerEvent, type AdServerPort, type ReportWindows, type WindowReport } from '../../core/ports/ad-server.ts';
import { AdServerSimulation } from '../../core/ports/ad-server-simulation.ts';
import { sql } from '../../core/sql.ts';
import { addDelivery, addRecorded, recordConversions } from './additions.ts';
import { recordsOf } from './records.ts';
import { BatchedRead } from '../../lib/batched-read.ts';
import { amend, book, modelLines, requiresReview, review, setState } from './orders.ts';
import { availableAt, between, cumulative, type ModelOptions } from './model.ts';
import { dispatchOne, generateEvents } from './events.ts';

const share = v.pipe(v.number(), v.minValue(0), v.maxValue(1));
const minutes = v.pipe(v.number(), v.minValue(0), v.maxValue(7 * 24 * 60));

const options = v.object({
  /** Same seed, same delivery: change it to get another plausible campaign. */
  seed: v.optional(v.pipe(v.string(), v.minLength(1)), 'adsim'),
  delayMinutes: v.optional(minutes, 60),
  lateProbability: v.optional(share, 0.05),
  lateMinutes: v.optional(minutes, 180),
  adjustmentProbability: v.optional(share, 0.02),
  adjustmentFactor: v.optional(share, 0.9),
  adjustmentLagMinutes: v.optional(minutes, 360),
  pacing: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(3)), 1.02),
  impairmentProbability: v.optional(share, 0),
  impairmentMinutes: v.optional(minutes, 90),
  approval: v.optional(
    v.object({
      reviewAboveBudget: v.optional(v.pipe(v.number(), v.minValue(0))),
      reviewMinutes: v.optional(minutes, 60),
      rejectAboveBudget: v.optional(v.pipe(v.number(), v.minValue(0))),
    }),
    {},
  ),
  /** How often the model's events are generated and due events dispatched. */
  tickMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10)), 15_000),
});

export type AdServerSimulatedOptions = v.InferInput<typeof options>;

/**
 * A simulated ad server behind the AdServer port, so every lifecycle and report happens for real
 * in tests and demos: orders and their serving timeline in its own tables, delivery
 * (impressions, clicks, spend) computed from a seeded model driven by the Clock port (the same
 * seed and clock give the same numbers), late data, restatements and impairments as events,
 * optional manual review of large orders, conversions attributed to the lines serving at their
 * time, and (AdServerSimulation port) delivery injected by sandbox test controls.
 */
export default definePlugin({
  name: 'ad-server-simulated',
  provides: [AdServer, AdServerSimulation],
  deps: { db: Database, clock: Clock },
  options,
  env: { ADSIM_SEED: 'seed' },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock }, kernel) {
    const o = kernel.options;
    const model: ModelOptions = {
      seed: o.seed,
      delayMinutes: o.delayMinutes,
      lateProbability: o.lateProbability,
      lateMinutes: o.lateMinutes,
      adjustmentProbability: o.adjustmentProbability,
      adjustmentFactor: o.adjustmentFactor,
      adjustmentLagMinutes: o.adjustmentLagMinutes,
      pacing: o.pacing,
    };
    const approval = {
      reviewMinutes: o.approval.reviewMinutes,
      reviewAboveBudget: o.approval.reviewAboveBudget,
      rejectAboveBudget: o.approval.rejectAboveBudget,
    };
    const handlers: Array<(tx: Queryable, event: AdServerEvent) => Promise<void>> = [];
    const reads = new BatchedRead((_, wanted: Array<{ media_buy_id: string; as_of: string }>) => recordsOf(db, wanted));

    const port: AdServerPort = {
      reporting: { expectedDelayMinutes: o.delayMinutes, timezone: 'UTC', granularities: ['hourly', 'daily', 'monthly'] },
      requiresReview: (order) => requiresReview(order, approval),
      book: (tx, order) => book(tx, order, clock.now(), approval),
      review: (tx, id) => review(tx, id, clock.now(), approval),
      amend,
      setState,
      async report(q, mediaBuyId, windowsLater, asOfDate) {
        const asOf = asOfDate.getTime();
        // as_of as its ISO text: what the statement's JSON parameter would hold anyway, without a Date's toJSON per wish.
        const wanted = { media_buy_id: mediaBuyId, as_of: asOfDate.toISOString() };
        // Outside a transaction, the reports asked for at once share one statement.
        const read = q === db ? reads.read('', wanted) : recordsOf(q, [wanted]).then((r) => r[0]!);
        let windows: ReportWindows;
        try {
          windows = await windowsLater;
        } catch (error) {
          read.catch(() => {});
          throw error;
        }
        const records = await read;
        const lines = records.lines;
        // Data is complete `delayMinutes` after the fact: nothing newer is reported.
        const horizon = asOf - model.delayMinutes * 60_000;
        // The distinct times the windows need, ascending, and each one's index.
        const at = new Map<number, number>();
        for (const w of windows) at.set(w.start.getTime(), 0).set(Math.min(w.end.getTime(), horizon), 0);
        const times = [...at.keys()].sort((a, b) => a - b);
        for (const [i, t] of times.entries()) at.set(t, i);
        const curves = lines.map((line) => cumulative(line, times, asOf, model));
        const reports = windows.map((w): WindowReport => {
          const start = w.start.getTime();
          const end = Math.max(start, Math.min(w.end.getTime(), horizon));
          const ready = asOf >= availableAt(mediaBuyId, w.end.getTime(), model);
          const report: WindowReport = {
            start: w.start,
            end: w.end,
            ready,
            lines: lines.map((line, i) => {
              const f = between(curves[i]![at.get(start)!]!, curves[i]![at.get(end)!]!);
              return { packageId: line.packageId, impressions: f.impressions, clicks: f.clicks, spend: f.spend };
            }),
          };
          if (!ready) report.availableAt = new Date(availableAt(mediaBuyId, w.end.getTime(), model));
          return report;
        });
        return addRecorded(reports, records);
      },
      subscribe: (handler) => void handlers.push(handler),
      async recordConversions(tx, mediaBuyIds, conversions) {
        if (!mediaBuyIds.length || !conversions.length) return 0;
        const lines = await modelLines(tx, mediaBuyIds);
        const rows = await tx.query<{ media_buy_id: string; package_id: string; currency: string }>(
          sql`SELECT media_buy_id, package_id, currency FROM adsim_lines WHERE media_buy_id = ANY(${[...mediaBuyIds]}::text[])`,
        );
        return recordConversions(tx, lines, new Map(rows.map((r) => [`${r.media_buy_id}#${r.package_id}`, r.currency])), conversions, model.seed);
      },
    };
    kernel.provide(AdServer, port);
    kernel.provide(AdServerSimulation, { addDelivery });

    kernel.scheduler.add({
      name: 'events',
      intervalMs: o.tickMs,
      async run() {
        const now = clock.now();
        const generated = await generateEvents(db, now, model, { probability: o.impairmentProbability, durationMinutes: o.impairmentMinutes });
        const dispatched = await dispatchOne(db, now, handlers, kernel.logger);
        return generated || dispatched ? 'again' : undefined;
      },
    });
  },
});
