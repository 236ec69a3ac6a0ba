import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { CrawlerError } from '../../core/ports/crawler.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { AgentCapabilities, DiscoveryPort } from '../../core/ports/discovery.ts';
import type { EventVisibility } from '../../core/ports/events.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
import { AgentUnreachableError, connectAgent, describeFailure, type AgentLimits, type AgentProtocol } from '../../lib/agent-clients/session.ts';
import { enqueueCrawl, type JobSettings } from './jobs.ts';
import { TransientCrawlError } from '../../lib/registry-documents/fetch.ts';
import type { CrawlDeps } from './pipeline.ts';
import { CRAWLER_ACTOR } from './events.ts';

/** Limits of one capabilities call (each request of the MCP/A2A exchange). */
export const CAPABILITY_LIMITS = { timeoutMs: 10_000, maxBytes: 1024 * 1024 };

const label = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
/** The parts of a `get_{ns}_capabilities` answer the registry keeps; everything else is ignored. */
const capabilitiesAnswer = v.looseObject({
  creative: v.optional(v.nullable(v.record(v.string(), v.unknown()), null)),
  signals: v.optional(v.nullable(v.record(v.string(), v.unknown()), null)),
  measurement: v.optional(
    v.nullable(
      v.looseObject({
        metrics: v.optional(
          v.pipe(
            v.array(v.looseObject({ metric_id: label, accreditations: v.optional(v.array(v.looseObject({ accrediting_body: label }))) })),
            v.maxLength(500, 'has more than 500 metrics'),
          ),
          [],
        ),
      }),
    ),
    null,
  ),
});

export type AgentCheckResult =
  | { status: 'updated' | 'unchanged'; agent_url: string; protocol: AgentProtocol; changed: string[]; metric_ids: string[]; events: number }
  | { status: 'error'; agent_url: string; error: string }
  | { status: 'skipped'; agent_url: string; reason: string };

export type AgentCheckDeps = Pick<CrawlDeps, 'db' | 'crawler' | 'events' | 'clock' | 'logger' | 'projection'> & {
  namespace: string;
  agentLimits?: AgentLimits;
};

/**
 * Queue a capabilities refresh for every enrolled agent whose capabilities are older than the
 * agent TTL (or were never crawled). Targets of agents no longer enrolled are forgotten; a target
 * whose capabilities were refreshed meanwhile (re-enrollment) is pushed back instead of queued.
 * Like the publisher schedule, a due target's next time moves one TTL ahead at once, so several
 * schedulers never queue it twice. Returns the agent URLs queued.
 */
export async function scheduleAgentChecks(
  db: DatabasePort,
  deps: { clock: ClockPort; ids: IdsPort; settings: JobSettings; projection: Pick<DiscoveryPort, 'enrolledAgents'> },
  limit = 1000,
): Promise<string[]> {
  const now = deps.clock.now();
  const ttl = deps.settings.agentTtlMs;
  const agents = (await deps.projection.enrolledAgents()).map((a) => ({ url: a.url, crawled: a.crawledAt?.toISOString() ?? null }));
  return db.transaction(async (tx) => {
    const enrolled = sql`jsonb_to_recordset(${agents}::jsonb) AS a(url text, crawled timestamptz)`;
    await tx.query(sql`DELETE FROM crawl_agent_targets t WHERE NOT EXISTS (SELECT 1 FROM ${enrolled} WHERE a.url = t.agent_url)`);
    await tx.query(sql`
      INSERT INTO crawl_agent_targets (agent_url, next_check_at)
      SELECT a.url, coalesce(a.crawled + ${`${ttl} milliseconds`}::interval, ${now}::timestamptz) FROM ${enrolled}
      ON CONFLICT (agent_url) DO NOTHING`);
    await tx.query(sql`
      UPDATE crawl_agent_targets t SET next_check_at = a.crawled + ${`${ttl} milliseconds`}::interval
      FROM ${enrolled}
      WHERE a.url = t.agent_url AND t.next_check_at <= ${now}::timestamptz AND a.crawled + ${`${ttl} milliseconds`}::interval > ${now}::timestamptz`);
    const due = await tx.query<{ agent_url: string }>(sql`
      UPDATE crawl_agent_targets SET next_check_at = ${new Date(now.getTime() + ttl)}::timestamptz
      WHERE agent_url IN (
        SELECT agent_url FROM crawl_agent_targets WHERE next_check_at <= ${now}::timestamptz ORDER BY next_check_at LIMIT ${limit}::int FOR UPDATE SKIP LOCKED
      )
      RETURNING agent_url`);
    for (const { agent_url } of due) await enqueueCrawl(tx, deps, { domain: agent_url, reason: 'schedule', kind: 'agent_capabilities' });
    return due.map((d) => d.agent_url);
  });
}

const isTransient = (e: unknown) =>
  (e instanceof CrawlerError && ['timeout', 'connection_failed', 'dns_failed'].includes(e.code)) || (e instanceof AgentUnreachableError && e.timedOut);

/**
 * Refresh one enrolled agent's capability catalogs: call its `get_{ns}_capabilities` over its
 * protocol, through the crawler port, and store creative / signals capabilities and the
 * measurement metric catalog. When they changed, `agent.profile_updated` is appended in the same
 * transaction, readable by whoever the catalog shows the agent to. An agent that answers
 * unusably is a recorded verdict (`status: 'error'`); a network failure or timeout throws
 * TransientCrawlError so the job is retried with backoff.
 */
export async function refreshAgentCapabilities(deps: AgentCheckDeps, agentUrl: string): Promise<AgentCheckResult> {
  const before = await deps.projection.agentState(deps.db, agentUrl);
  if (!before?.enrolled) return { status: 'skipped', agent_url: agentUrl, reason: 'not enrolled' };

  const tool = `get_${deps.namespace}_capabilities`;
  let answer: unknown;
  let protocol: AgentProtocol;
  try {
    const session = await connectAgent(deps.crawler, agentUrl, before.protocol ?? 'auto', deps.agentLimits ?? CAPABILITY_LIMITS);
    protocol = session.protocol;
    answer = await session.call(tool, {});
  } catch (error) {
    if (isTransient(error)) throw new TransientCrawlError(`${agentUrl}: ${describeFailure(error)}`, true);
    return { status: 'error', agent_url: agentUrl, error: `${tool}: ${describeFailure(error)}`.slice(0, 2000) };
  }
  const parsed = v.safeParse(capabilitiesAnswer, answer);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((p) => p.key).join('.') ?? '';
    return { status: 'error', agent_url: agentUrl, error: `${tool} answer: ${path ? `${path}: ` : ''}${issue.message}`.slice(0, 2000) };
  }
  const caps: Required<AgentCapabilities> = {
    creative_capabilities: parsed.output.creative ?? null,
    signals_capabilities: parsed.output.signals ?? null,
    metrics: (parsed.output.measurement?.metrics ?? []) as Required<AgentCapabilities>['metrics'],
  };

  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const row = await deps.projection.agentState(tx, agentUrl, true);
    if (!row?.enrolled) return { status: 'skipped' as const, agent_url: agentUrl, reason: 'not enrolled' };
    const old = row.capabilities;
    const changed = (['creative_capabilities', 'signals_capabilities', 'metrics'] as const).filter((k) => canonicalJson(old[k]) !== canonicalJson(caps[k]));
    await deps.projection.recordAgentCapabilities(tx, agentUrl, caps, now);
    const metricIds = [...new Set(caps.metrics.map((m) => m.metric_id))];
    let events = 0;
    if (changed.length) {
      await deps.events.append(tx, {
        event_type: 'agent.profile_updated',
        entity_type: 'agent',
        entity_id: row.id,
        payload: { agent_url: agentUrl, change: 'capabilities', changed, capabilities: caps, crawled_at: now.toISOString() },
        actor: CRAWLER_ACTOR,
        visibility: row.visibility as EventVisibility,
        owner_org_id: row.owner_org_id,
      });
      events = 1;
    }
    deps.logger.info({ agent_url: agentUrl, protocol, changed, metrics: metricIds.length }, 'agent capabilities refreshed');
    return { status: changed.length ? ('updated' as const) : ('unchanged' as const), agent_url: agentUrl, protocol, changed, metric_ids: metricIds, events };
  });
}
