import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';

export interface HealthState {
  status: string;
  last_checked_at: string | Date | null;
  latency_ms: number | null;
  compliance: string;
  compliance_issues: unknown[];
  compliance_changed_at: string | Date | null;
  verified: boolean;
  verified_since: string | Date | null;
  checks_24h: number;
  reachable_24h: number;
}

const iso = (d: string | Date | null) => (d ? new Date(d).toISOString() : null);

/** Current health of the given agents, with their last 24 hours of probes counted. */
export async function healthStates(db: Queryable, agentIds: readonly string[], now: Date): Promise<Map<string, HealthState>> {
  if (!agentIds.length) return new Map();
  const since = new Date(now.getTime() - 86_400_000);
  const rows = await db.query<HealthState & { agent_id: string }>(sql`
    SELECT h.agent_id::text, h.status, h.last_checked_at, h.latency_ms, h.compliance, h.compliance_issues, h.compliance_changed_at, h.verified, h.verified_since,
      (SELECT count(*)::int FROM registry_agent_health_checks c WHERE c.agent_id = h.agent_id AND c.checked_at > ${since}::timestamptz) AS checks_24h,
      (SELECT count(*)::int FROM registry_agent_health_checks c WHERE c.agent_id = h.agent_id AND c.checked_at > ${since}::timestamptz AND c.reachable) AS reachable_24h
    FROM registry_agent_health h WHERE h.agent_id = ANY(${agentIds}::uuid[])`);
  return new Map(rows.map((r) => [r.agent_id, r]));
}

/** The catalog's `health`, `compliance` and `verification` members asked for (unknown before the first probe). */
export function healthBlocks(s: HealthState | undefined, want: { health?: boolean; compliance?: boolean; verification?: boolean }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (want.health) {
    out.health = {
      status: s?.status ?? 'unknown',
      last_checked_at: iso(s?.last_checked_at ?? null),
      latency_ms: s?.latency_ms ?? null,
      uptime_24h: s?.checks_24h ? Math.round((s.reachable_24h / s.checks_24h) * 1000) / 1000 : null,
      checks_24h: s?.checks_24h ?? 0,
    };
  }
  if (want.compliance) {
    out.compliance = {
      status: s?.compliance ?? 'unknown',
      issues: s?.compliance_issues ?? [],
      changed_at: iso(s?.compliance_changed_at ?? null),
    };
  }
  if (want.verification) {
    out.verification = { verified: s?.verified ?? false, badge: s?.verified ? 'verified' : null, since: iso(s?.verified_since ?? null) };
  }
  return out;
}
