import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Conversion, DeliveryFigures, WindowReport } from '../../core/ports/ad-server.ts';
import { activeIntervals, unit, type ModelLine } from './model.ts';

/**
 * Attribute each conversion to one line serving at its time (picked by a hash of its key, so the
 * same key always lands on the same line); keys already attributed are skipped.
 */
export async function recordConversions(
  tx: Queryable,
  lines: readonly ModelLine[],
  currencies: Map<string, string>,
  conversions: readonly Conversion[],
  seed: string,
): Promise<number> {
  const intervals = lines.map((l) => ({ line: l, active: activeIntervals(l) }));
  const rows: Array<{ media_buy_id: string; package_id: string; conversion_key: string; event_type: string; at: string; value: number | null }> = [];
  for (const c of conversions) {
    const at = c.at.getTime();
    const serving = intervals.filter((x) => x.active.some(([a, b]) => a <= at && at < b)).map((x) => x.line);
    if (!serving.length) continue;
    const line = serving[Math.floor(unit(seed, 'conversion', c.key) * serving.length)]!;
    const sameCurrency = c.value !== undefined && (!c.currency || c.currency === currencies.get(`${line.mediaBuyId}#${line.packageId}`));
    rows.push({
      media_buy_id: line.mediaBuyId,
      package_id: line.packageId,
      conversion_key: c.key,
      event_type: c.eventType,
      at: c.at.toISOString(),
      value: sameCurrency ? c.value! : null,
    });
  }
  if (!rows.length) return 0;
  const inserted = await tx.query(sql`
    INSERT INTO adsim_conversions (media_buy_id, package_id, conversion_key, event_type, at, value)
    SELECT x.media_buy_id, x.package_id, x.conversion_key, x.event_type, x.at, x.value
    FROM jsonb_to_recordset(${rows}::jsonb) AS x(media_buy_id text, package_id text, conversion_key text, event_type text, at timestamptz, value numeric)
    ON CONFLICT (media_buy_id, conversion_key) DO NOTHING RETURNING conversion_key`);
  return inserted.length;
}

export async function addDelivery(tx: Queryable, mediaBuyId: string, packageId: string, f: DeliveryFigures, at: Date): Promise<void> {
  await tx.query(sql`INSERT INTO adsim_injected (media_buy_id, package_id, at, impressions, clicks, spend)
    VALUES (${mediaBuyId}::text, ${packageId}::text, ${at}::timestamptz, ${Math.round(f.impressions)}::bigint, ${Math.round(f.clicks)}::bigint, ${f.spend}::numeric)`);
}

/** Delivery injected by test controls and conversions attributed, at or before the report's `asOf` (records.ts). */
export interface Recorded {
  injected: ReadonlyArray<{ package_id: string; at: string; impressions: string; clicks: string; spend: string }>;
  conversions: ReadonlyArray<{ package_id: string; at: string; value: string | null }>;
}

/**
 * Add injected delivery and conversions to window reports: the rows whose time falls in the
 * window. Conversion figures appear only on lines that have some in the window.
 */
export function addRecorded(reports: WindowReport[], { injected, conversions }: Recorded): WindowReport[] {
  if (!injected.length && !conversions.length) return reports;
  const within = (at: string, r: WindowReport) => new Date(at).getTime() >= r.start.getTime() && new Date(at).getTime() < r.end.getTime();
  return reports.map((r) => ({
    ...r,
    lines: r.lines.map((l) => {
      const out: typeof l = { ...l };
      for (const i of injected) {
        if (i.package_id !== l.packageId || !within(i.at, r)) continue;
        out.impressions += Number(i.impressions);
        out.clicks += Number(i.clicks);
        out.spend = Math.round((out.spend + Number(i.spend)) * 100) / 100;
      }
      const mine = conversions.filter((c) => c.package_id === l.packageId && within(c.at, r));
      if (mine.length) {
        out.conversions = mine.length;
        out.conversionValue = Math.round(mine.reduce((s, c) => s + Number(c.value ?? 0), 0) * 100) / 100;
      }
      return out;
    }),
  }));
}
