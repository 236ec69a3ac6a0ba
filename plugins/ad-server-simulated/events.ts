import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { AdServerEvent } from '../../core/ports/ad-server.ts';
import type { Logger } from '../../core/log.ts';
import { modelLines } from './orders.ts';
import { restatedHours, unit, activeIntervals, type ModelOptions } from './model.ts';

const HOUR = 3_600_000;

export interface ImpairmentModel {
  /** Chance per served line-hour that a dependency goes offline (0: only injected impairments). */
  probability: number;
  /** How long a modelled impairment lasts before it resolves. */
  durationMinutes: number;
}

/** Queue an event for subscribers at `dueAt` (tests and demos inject impairments this way). */
export async function injectEvent(q: Queryable, event: AdServerEvent, dueAt?: Date): Promise<void> {
  const due = dueAt ?? (event.type === 'impairment' ? event.observedAt : event.restatedAt);
  await q.query(sql`INSERT INTO adsim_events (media_buy_id, payload, due_at) VALUES (${event.mediaBuyId}::text, ${event}::jsonb, ${due}::timestamptz)`);
}

/**
 * Generate the model's events for the hours that passed since the last run: a restatement of each
 * flagged hour (due after the restatement lag) and seeded impairments (open, then resolved).
 * Orders are claimed one at a time with SKIP LOCKED, so instances never generate twice.
 */
export async function generateEvents(db: DatabasePort, now: Date, o: ModelOptions, impairments: ImpairmentModel): Promise<number> {
  return db.transaction(async (tx) => {
    const [order] = await tx.query<{ media_buy_id: string; events_through: Date; end_time: Date }>(sql`
      SELECT media_buy_id, events_through, end_time FROM adsim_orders
      WHERE decision = 'approved' AND events_through < LEAST(end_time, ${new Date(Math.floor(now.getTime() / HOUR) * HOUR)}::timestamptz)
        AND EXISTS (SELECT 1 FROM adsim_line_states s WHERE s.media_buy_id = adsim_orders.media_buy_id)
      ORDER BY events_through LIMIT 1 FOR UPDATE SKIP LOCKED`);
    if (!order) return 0;
    const from = new Date(order.events_through).getTime();
    const to = Math.min(new Date(order.end_time).getTime(), Math.floor(now.getTime() / HOUR) * HOUR);
    for (const line of await modelLines(tx, [order.media_buy_id])) {
      for (const hour of restatedHours(line, from, to, o)) {
        const start = new Date(hour * HOUR);
        const end = new Date((hour + 1) * HOUR);
        const restatedAt = new Date(end.getTime() + o.adjustmentLagMinutes * 60_000);
        const event: AdServerEvent = {
          type: 'delivery_adjusted',
          mediaBuyId: line.mediaBuyId,
          start,
          end,
          restatedAt,
          reason: 'Invalid traffic removed after post-delivery filtering',
        };
        await injectEvent(tx, event, restatedAt);
      }
      if (impairments.probability <= 0) continue;
      const intervals = activeIntervals(line);
      for (let hour = Math.floor(from / HOUR); hour * HOUR < to; hour++) {
        const served = intervals.some(([a, b]) => a < (hour + 1) * HOUR && b > hour * HOUR);
        if (!served || unit(o.seed, 'impair', line.mediaBuyId, line.packageId, hour) >= impairments.probability) continue;
        const observedAt = new Date(hour * HOUR + HOUR / 2);
        const base = {
          type: 'impairment' as const,
          mediaBuyId: line.mediaBuyId,
          packageIds: [line.packageId],
          resourceType: 'property' as const,
          resourceId: `prop_${line.packageId.slice(-8)}_${hour}`,
          severity: 'general' as const,
          offlineState: 'depublished',
          reasonCode: 'property_depublished',
          reason: 'A property of this package was removed from the publisher adagents.json',
        };
        await injectEvent(tx, { ...base, state: 'open', observedAt }, observedAt);
        const resolvedAt = new Date(observedAt.getTime() + impairments.durationMinutes * 60_000);
        await injectEvent(tx, { ...base, state: 'resolved', observedAt: resolvedAt }, resolvedAt);
      }
    }
    await tx.query(sql`UPDATE adsim_orders SET events_through = ${new Date(to)}::timestamptz WHERE media_buy_id = ${order.media_buy_id}::text`);
    return 1;
  });
}

function revive(payload: any): AdServerEvent {
  if (payload.type === 'impairment') return { ...payload, observedAt: new Date(payload.observedAt) };
  return { ...payload, start: new Date(payload.start), end: new Date(payload.end), restatedAt: new Date(payload.restatedAt) };
}

/**
 * Hand one due event to the subscribers inside the transaction that marks it dispatched; a
 * handler that throws leaves it queued (retried a minute later per failure) until it failed 10 times.
 */
export async function dispatchOne(
  db: DatabasePort,
  now: Date,
  handlers: ReadonlyArray<(tx: Queryable, event: AdServerEvent) => Promise<void>>,
  logger: Logger,
): Promise<boolean> {
  let claimed: { id: string; attempts: number } | null = null;
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx.query<{ id: string; payload: unknown; attempts: number }>(sql`
        SELECT id::text, payload, attempts FROM adsim_events WHERE dispatched_at IS NULL AND due_at <= ${now}::timestamptz
        ORDER BY due_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`);
      if (!row) return false;
      claimed = { id: row.id, attempts: row.attempts };
      const event = revive(row.payload);
      for (const h of handlers) await h(tx, event);
      await tx.query(sql`UPDATE adsim_events SET dispatched_at = ${now}::timestamptz, attempts = attempts + 1 WHERE id = ${row.id}::bigint`);
      return true;
    });
  } catch (error) {
    if (!claimed) throw error;
    const { id, attempts } = claimed as { id: string; attempts: number };
    logger.error({ err: error, eventId: id, attempts: attempts + 1 }, 'ad server event handler failed');
    const giveUp = attempts + 1 >= 10;
    const retryAt = new Date(now.getTime() + (attempts + 1) * 60_000);
    await db.query(sql`UPDATE adsim_events SET attempts = attempts + 1, last_error = ${String((error as Error).message).slice(0, 500)}::text,
      due_at = ${retryAt}::timestamptz, dispatched_at = ${giveUp ? now : null}::timestamptz WHERE id = ${id}::bigint`);
    return true;
  }
}
