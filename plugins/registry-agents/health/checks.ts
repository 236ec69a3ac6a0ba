import { sql } from '../../../core/sql.ts';
import type { CrawlerPort } from '../../../core/ports/crawler.ts';
import type { DatabasePort, Queryable } from '../../../core/ports/database.ts';
import type { ClockPort } from '../../../core/ports/clock.ts';
import type { EventLogPort, NewEvent } from '../../../core/ports/events.ts';
import type { Logger } from '../../../core/log.ts';
import type { IdsPort } from '../../../core/ports/ids.ts';
import { connectAgent, describeFailure } from '../../../lib/agent-clients/session.ts';
import { capabilitiesSchema, conformanceIssues, type ConformanceIssue } from './conformance.ts';

/** The badge rules (README "Agent health, compliance and verification"). */
export const RULES = {
  /** A probe answering slower than this is `degraded`. */
  slowMs: 2000,
  /** Consecutive passing probes (healthy and compliant) that earn the verification badge. */
  earnAfter: 3,
  /** Consecutive failing probes (unreachable, no answer, or non-compliant) that lose it. */
  loseAfter: 2,
};

export interface HealthSettings {
  namespace: string;
  /** Time between two probes of one agent. */
  everyMs: number;
  /** Agents probed per run. */
  batch: number;
  timeoutMs: number;
}

export interface HealthDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  crawler: CrawlerPort;
  events: EventLogPort | undefined;
  logger: Logger;
}

interface Probe {
  protocol: string | null;
  reachable: boolean;
  answered: boolean;
  conformant: boolean | null;
  latencyMs: number | null;
  issues: ConformanceIssue[];
  error: string | null;
}

/** One probe: connect (MCP or A2A, through the SSRF-guarded crawler), call get_{ns}_capabilities, check the answer. */
export async function probeAgent(crawler: CrawlerPort, clock: ClockPort, url: string, protocol: 'mcp' | 'a2a' | null, s: HealthSettings): Promise<Probe> {
  const started = clock.now().getTime();
  const elapsed = () => clock.now().getTime() - started;
  let session: Awaited<ReturnType<typeof connectAgent>>;
  try {
    session = await connectAgent(crawler, url, protocol ?? 'auto', { timeoutMs: s.timeoutMs, maxBytes: 1024 * 1024 });
  } catch (error) {
    return { protocol, reachable: false, answered: false, conformant: null, latencyMs: null, issues: [], error: describeFailure(error).slice(0, 500) };
  }
  try {
    const answer = await session.call(`get_${s.namespace}_capabilities`, {});
    const issues = conformanceIssues(capabilitiesSchema(s.namespace), answer);
    return { protocol: session.protocol, reachable: true, answered: true, conformant: issues.length === 0, latencyMs: elapsed(), issues, error: null };
  } catch (error) {
    return {
      protocol: session.protocol,
      reachable: true,
      answered: false,
      conformant: null,
      latencyMs: elapsed(),
      issues: [],
      error: describeFailure(error).slice(0, 500),
    };
  }
}

interface State {
  agent_id: string;
  url: string;
  visibility: string;
  status: string;
  compliance: string;
  verified: boolean;
  passes: number;
  failures: number;
}

/**
 * Apply a probe to an agent's state (in `tx`): history row, status, compliance, the badge, and the
 * feed events of every change (none for private agents: the feed would reveal them).
 */
export async function recordProbe(
  tx: Queryable,
  events: EventLogPort | undefined,
  state: State,
  p: Probe,
  now: Date,
  newId: () => string,
): Promise<NewEvent[]> {
  const status = !p.reachable ? 'unreachable' : !p.answered || (p.latencyMs ?? 0) > RULES.slowMs ? 'degraded' : 'healthy';
  // An agent that does not answer cannot be judged: its compliance stays what it was.
  const compliance = p.answered ? (p.conformant ? 'compliant' : 'non_compliant') : state.compliance;
  const pass = status === 'healthy' && compliance === 'compliant';
  const passes = pass ? state.passes + 1 : 0;
  const failures = pass ? 0 : state.failures + 1;
  const verified = state.verified ? failures < RULES.loseAfter : passes >= RULES.earnAfter;

  await tx.query(sql`
    INSERT INTO registry_agent_health_checks (id, agent_id, checked_at, protocol, reachable, capabilities_answered, schema_conformant, latency_ms, issues, error)
    VALUES (${newId()}::uuid, ${state.agent_id}::uuid, ${now}::timestamptz, ${p.protocol}::text, ${p.reachable}::boolean, ${p.answered}::boolean,
      ${p.conformant}::boolean, ${p.latencyMs}::int, ${p.issues}::jsonb, ${p.error}::text)`);
  await tx.query(sql`
    UPDATE registry_agent_health SET last_checked_at = ${now}::timestamptz, status = ${status}::text, latency_ms = ${p.latencyMs}::int,
      compliance = ${compliance}::text,
      compliance_issues = CASE WHEN ${p.answered}::boolean THEN ${p.issues}::jsonb ELSE compliance_issues END,
      compliance_changed_at = CASE WHEN compliance <> ${compliance}::text THEN ${now}::timestamptz ELSE compliance_changed_at END,
      verified = ${verified}::boolean,
      verified_since = CASE WHEN ${verified}::boolean AND NOT verified THEN ${now}::timestamptz WHEN ${verified}::boolean THEN verified_since ELSE NULL END,
      passes = ${passes}::int, failures = ${failures}::int
    WHERE agent_id = ${state.agent_id}::uuid`);

  const out: NewEvent[] = [];
  if (state.visibility !== 'private') {
    const ev = (event_type: string, payload: Record<string, unknown>) =>
      out.push({ event_type, entity_type: 'agent', entity_id: state.agent_id, actor: 'registry:health', payload: { agent_url: state.url, ...payload } });
    if (compliance !== state.compliance || verified !== state.verified) {
      ev('agent.compliance_changed', {
        compliance,
        previous_compliance: state.compliance,
        verified,
        issues: p.answered ? p.issues : [],
        checked_at: now.toISOString(),
      });
    }
    if (verified && !state.verified) ev('agent.verification_earned', { badge: 'verified', passes, checked_at: now.toISOString() });
    if (!verified && state.verified) ev('agent.verification_lost', { badge: 'verified', failures, status, compliance, checked_at: now.toISOString() });
  }
  if (out.length) await events?.append(tx, out);
  return out;
}

/**
 * One run of the health job: enrolled agents get a schedule row; due ones (at most `batch`) are
 * claimed with FOR UPDATE SKIP LOCKED and pushed one interval ahead in the claiming transaction, so
 * instances never probe one agent twice; each is probed outside any transaction and its result
 * recorded in one. Returns how many were probed (the job runs again at once when a full batch was due).
 */
export async function runHealthChecks(d: HealthDeps, s: HealthSettings): Promise<number> {
  const now = d.clock.now();
  const next = new Date(now.getTime() + s.everyMs);
  const due = await d.db.transaction(async (tx) => {
    await tx.query(sql`
      INSERT INTO registry_agent_health (agent_id, next_check_at)
      SELECT id, ${now}::timestamptz FROM registry_agents WHERE owner_org_id IS NOT NULL
      ON CONFLICT (agent_id) DO NOTHING`);
    return tx.query<{ agent_id: string; url: string; protocol: 'mcp' | 'a2a' | null }>(sql`
      UPDATE registry_agent_health h SET next_check_at = ${next}::timestamptz
      FROM registry_agents a
      WHERE a.id = h.agent_id AND h.agent_id IN (
        SELECT agent_id FROM registry_agent_health WHERE next_check_at <= ${now}::timestamptz
        ORDER BY next_check_at LIMIT ${s.batch}::int FOR UPDATE SKIP LOCKED)
      RETURNING h.agent_id::text, a.url, a.protocol`);
  });
  for (const agent of due) {
    const probe = await probeAgent(d.crawler, d.clock, agent.url, agent.protocol, s);
    await d.db.transaction(async (tx) => {
      const [state] = await tx.query<State>(sql`
        SELECT h.agent_id::text, a.url, a.visibility, h.status, h.compliance, h.verified, h.passes, h.failures
        FROM registry_agent_health h JOIN registry_agents a ON a.id = h.agent_id
        WHERE h.agent_id = ${agent.agent_id}::uuid AND a.owner_org_id IS NOT NULL FOR UPDATE OF h`);
      if (state) await recordProbe(tx, d.events, state, probe, d.clock.now(), d.ids.uuid7);
    });
    d.logger.debug({ agent: agent.url, reachable: probe.reachable, conformant: probe.conformant, ms: probe.latencyMs }, 'agent probed');
  }
  return due.length;
}
