import { sql } from '../../../core/sql.ts';
import type { DatabasePort } from '../../../core/ports/database.ts';
import type { AuthoritativeRecordsPort } from '../../../core/ports/authoritative-records.ts';
import type { ClockPort } from '../../../core/ports/clock.ts';

/**
 * Hand publishers whose valid adagents.json the projection holds, but which were never recorded,
 * to the AdagentsRecords port (registry-properties), so `GET /api/properties/resolve` and the
 * property listing know every publisher `lookup/domain` knows. The crawl pipeline records in its own
 * transaction; this catches rows written another way (demo seed, imports, crawls made before the
 * properties plugin was deployed). Recording the same document again changes nothing. Rows are
 * claimed with SKIP LOCKED, so instances share the work. Returns how many were recorded.
 */
export async function recordUnrecordedPublishers(db: DatabasePort, records: AuthoritativeRecordsPort, clock: ClockPort, batch = 100): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await tx.query<{ id: string; domain: string; adagents: Record<string, unknown> }>(sql`
      SELECT id::text, domain, adagents FROM registry_publishers
      WHERE adagents_valid AND adagents IS NOT NULL AND adagents_recorded_at IS NULL
      ORDER BY domain LIMIT ${batch}::int FOR UPDATE SKIP LOCKED`);
    for (const row of rows) await records.record(tx, row.domain, row.adagents);
    if (rows.length) {
      await tx.query(sql`UPDATE registry_publishers SET adagents_recorded_at = ${clock.now()}::timestamptz WHERE id = ANY(${rows.map((r) => r.id)}::uuid[])`);
    }
    return rows.length;
  });
}
