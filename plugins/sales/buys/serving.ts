import { sql } from '../../../core/sql.ts';
import type { MediaBuysPort } from '../../../core/ports/media-buys.ts';

/** The MediaBuys port: the buys that served in a period (conversion attribution by the buyer-data plugin). */
export const mediaBuysPort: MediaBuysPort = {
  async servingBetween(q, accountId, from, to) {
    const rows = await q.query<{ media_buy_id: string }>(sql`SELECT media_buy_id FROM sales_media_buys
      WHERE account_id = ${accountId}::text AND started_at IS NOT NULL
        AND started_at <= ${to}::timestamptz AND COALESCE(ended_at, end_time) > ${from}::timestamptz`);
    return rows.map((r) => r.media_buy_id);
  },
};
