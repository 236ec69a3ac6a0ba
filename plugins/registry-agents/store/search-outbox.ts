import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';

/**
 * Queue agents for the search index, in the caller's transaction: the change reaches the index
 * exactly when the write commits, however the process ends afterwards. One row per agent; a
 * newer change bumps the version, so a drain that read an older state does not delete it.
 */
export async function enqueueSearch(tx: Queryable, agentUrls: readonly string[], now: Date): Promise<void> {
  // Sorted, so two writers touching the same agents lock their rows in the same order.
  const urls = [...new Set(agentUrls)].sort();
  if (urls.length === 0) return;
  await tx.query(sql`
    INSERT INTO registry_search_outbox (agent_url, next_attempt_at, created_at)
    SELECT u, ${now}::timestamptz, ${now}::timestamptz FROM unnest(${urls}::text[]) AS u
    ON CONFLICT (agent_url) DO UPDATE SET version = EXCLUDED.version, attempts = 0, next_attempt_at = EXCLUDED.next_attempt_at, last_error = NULL`);
}

/** Queue every agent that has a profile (rebuilds, bulk loads). */
export async function enqueueAllProfiles(tx: Queryable, now: Date): Promise<void> {
  await tx.query(sql`
    INSERT INTO registry_search_outbox (agent_url, next_attempt_at, created_at)
    SELECT a.url, ${now}::timestamptz, ${now}::timestamptz FROM registry_agent_profiles p JOIN registry_agents a ON a.id = p.agent_id
    ON CONFLICT (agent_url) DO UPDATE SET version = EXCLUDED.version, attempts = 0, next_attempt_at = EXCLUDED.next_attempt_at, last_error = NULL`);
}
