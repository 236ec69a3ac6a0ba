import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';

/** Tables whose rows change on refused requests by design (rate-limit counters, key last use). */
const VOLATILE = new Set(['rate_limit_windows', 'api_keys']);
/** Tables a background job moves rows between (the feed sequencer: staged -> sequenced): counted together. */
const MOVED = ['registry_event_staging', 'registry_events'];

/**
 * A fingerprint of every table in `schema` (row count and a digest of the rows), in one query,
 * so a test can assert that a refused request changed nothing: no insert, update or delete.
 */
export async function tableFingerprint(db: Queryable, schema: string): Promise<Record<string, string>> {
  const tables = await db.query<{ name: string }>(
    sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ${schema}::text AND table_type = 'BASE TABLE' ORDER BY 1`,
  );
  const names = tables.map((t) => t.name).filter((n) => !VOLATILE.has(n) && !MOVED.includes(n));
  const moved = tables.map((t) => t.name).filter((n) => MOVED.includes(n));
  if (!names.length && !moved.length) return {};
  const parts = names.map(
    (n) => `SELECT '${n}' AS name, count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest FROM "${schema}"."${n}" t`,
  );
  if (moved.length)
    parts.push(`SELECT '${moved.join('+')}' AS name, (${moved.map((n) => `(SELECT count(*) FROM "${schema}"."${n}")`).join(' + ')})::int AS n, '' AS digest`);
  const rows = await db.query<{ name: string; n: number; digest: string }>(sql.raw(parts.join(' UNION ALL ')));
  return Object.fromEntries(rows.map((r) => [r.name, `${r.n}:${r.digest}`]));
}

/**
 * The fingerprint once the deployment's background work is done: a successful call may wake jobs
 * (by NOTIFY, which arrives a moment later) whose writes must not be laid at the next call's door.
 * Waits for the jobs, then until two readings 50 ms apart agree.
 */
export async function settledFingerprint(db: Queryable, schema: string, scheduler: { idle(): Promise<void> }): Promise<Record<string, string>> {
  let last = '';
  for (;;) {
    await scheduler.idle();
    const now = await tableFingerprint(db, schema);
    const text = JSON.stringify(now);
    if (text === last) return now;
    last = text;
    await Bun.sleep(50);
  }
}
