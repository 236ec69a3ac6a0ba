import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Recorded } from './additions.ts';
import type { ModelLine } from './model.ts';
import { LINE, toModelLine } from './orders.ts';
import { wishRows } from '../../lib/batched-read.ts';

/** What a report of one order reads: its approved lines and what was recorded for them up to `as_of`. */
export interface OrderRecords extends Recorded {
  lines: ModelLine[];
}

/** The records of each wanted order, in order, in one statement (however many reports ask at once). */
export async function recordsOf(q: Queryable, wanted: ReadonlyArray<{ media_buy_id: string; as_of: Date | string }>): Promise<OrderRecords[]> {
  const rows = await q.query<{ lines: Parameters<typeof toModelLine>[0][] } & Recorded>(sql`
    SELECT
      (SELECT COALESCE(json_agg(${LINE} ORDER BY l.package_id), '[]') FROM adsim_lines l JOIN adsim_orders o USING (media_buy_id)
        WHERE l.media_buy_id = r.media_buy_id AND o.decision = 'approved') AS lines,
      (SELECT COALESCE(json_agg(json_build_object('package_id', x.package_id, 'at', x.at, 'impressions', x.impressions::text,
          'clicks', x.clicks::text, 'spend', x.spend::text)), '[]')
        FROM adsim_injected x WHERE x.media_buy_id = r.media_buy_id AND x.at <= r.as_of) AS injected,
      (SELECT COALESCE(json_agg(json_build_object('package_id', c.package_id, 'at', c.at, 'value', c.value::text)), '[]')
        FROM adsim_conversions c WHERE c.media_buy_id = r.media_buy_id AND c.at <= r.as_of) AS conversions
    FROM ${wishRows(wanted, 'media_buy_id text, as_of timestamptz')}
    ORDER BY r.i`);
  return rows.map((r) => ({ lines: r.lines.map(toModelLine), injected: r.injected, conversions: r.conversions }));
}
