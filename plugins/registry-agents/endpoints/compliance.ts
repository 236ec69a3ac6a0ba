import * as v from 'valibot';
import { defineEndpoint } from '../../../core/endpoint.ts';
import { notFound } from '../../../core/errors.ts';
import { sql } from '../../../core/sql.ts';
import type { Principal } from '../../../core/ports/auth.ts';
import { normalizeAgentUrl } from '../../../lib/urls.ts';
import { agentUrlOrThrow } from '../urls.ts';
import { visibleAgents, type DiscoveryContext } from '../context.ts';
import { agentComplianceOut, storyboardStatusBulkOut, storyboardStatusOut } from '../responses.ts';

/**
 * The registry runs one storyboard against enrolled agents: its periodic probe (reach the agent,
 * get a capabilities answer, validate it against the schemas). Compliance and storyboard status
 * are that probe's results, in the shapes the official client reads.
 */
const STORYBOARD = { storyboard_id: 'registry_capabilities_probe', title: 'Capabilities discovery (registry probe)', category: 'discovery', track: 'core' };

interface ProbeRow {
  agent_id: string;
  url: string;
  compliance: string | null;
  compliance_issues: unknown[] | null;
  compliance_changed_at: Date | string | null;
  last_checked_at: Date | string | null;
  reachable: boolean | null;
  capabilities_answered: boolean | null;
  schema_conformant: boolean | null;
  checked_at: Date | string | null;
  last_passed_at: Date | string | null;
  last_failed_at: Date | string | null;
}

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** Agents in the catalog the caller may see, by normalized URL, with their current probe state and last probe. */
async function probeRows(c: DiscoveryContext, urls: readonly string[], principal: Principal | null): Promise<ProbeRow[]> {
  if (!urls.length) return [];
  return c.db.query<ProbeRow>(sql`
    SELECT a.id::text AS agent_id, a.url, h.compliance, h.compliance_issues, h.compliance_changed_at, h.last_checked_at,
      last.reachable, last.capabilities_answered, last.schema_conformant, last.checked_at,
      (SELECT max(checked_at) FROM registry_agent_health_checks p WHERE p.agent_id = a.id AND p.schema_conformant) AS last_passed_at,
      (SELECT max(checked_at) FROM registry_agent_health_checks p WHERE p.agent_id = a.id AND p.schema_conformant IS NOT TRUE) AS last_failed_at
    FROM registry_agents a
    LEFT JOIN registry_agent_health h ON h.agent_id = a.id
    LEFT JOIN LATERAL (
      SELECT reachable, capabilities_answered, schema_conformant, checked_at FROM registry_agent_health_checks p
      WHERE p.agent_id = a.id ORDER BY checked_at DESC LIMIT 1) last ON true
    WHERE a.url = ANY(${urls}::text[]) AND a.owner_org_id IS NOT NULL AND ${visibleAgents(principal)}`);
}

/** The probe as a StoryboardStatus: three steps (reachable, capabilities answered, answer conforms). */
function storyboard(row: ProbeRow) {
  const steps = [
    { id: 'reach_agent', title: 'Reach the agent', ok: row.reachable },
    { id: 'get_capabilities', title: 'Get a capabilities answer', ok: row.capabilities_answered },
    { id: 'validate_capabilities', title: 'Capabilities answer conforms to the schema', ok: row.schema_conformant },
  ];
  const tested = row.checked_at !== null;
  const passed = steps.filter((s) => s.ok === true).length;
  const failed = steps.find((s) => s.ok !== true);
  return {
    ...STORYBOARD,
    requested_compliance_target: null,
    adcp_version: null,
    status: !tested ? 'untested' : passed === steps.length ? 'passing' : passed === 0 ? 'failing' : 'partial',
    steps_passed: tested ? passed : 0,
    steps_total: steps.length,
    failure_count: tested && failed ? 1 : 0,
    skipped_count: tested && failed ? steps.length - passed - 1 : 0,
    first_failed_step_id: tested ? (failed?.id ?? null) : null,
    first_failed_step_title: tested ? (failed?.title ?? null) : null,
    last_tested_at: iso(row.checked_at),
  };
}

const COMPLIANCE_STATUS: Record<string, 'passing' | 'failing' | 'unknown'> = { compliant: 'passing', non_compliant: 'failing', unknown: 'unknown' };

/** An encoded agent URL path segment (the client sends encodeURIComponent(url)). */
const decodedUrl = (raw: string) => {
  try {
    return agentUrlOrThrow(decodeURIComponent(raw), 'agentUrl');
  } catch {
    return agentUrlOrThrow(raw, 'agentUrl');
  }
};

export function complianceEndpoints(c: DiscoveryContext) {
  const agentUrlParam = v.object({ agentUrl: v.pipe(v.string(), v.minLength(1), v.maxLength(6144)) });

  const compliance = defineEndpoint({
    method: 'GET',
    path: '/api/registry/agents/{agentUrl}/compliance',
    tool: 'get_agent_compliance',
    success: { schema: agentComplianceOut },
    summary: "An agent's compliance (agentUrl URL-encoded): status, track results and the registry probe's storyboard",
    tags: ['Agent discovery'],
    auth: 'optional',
    params: agentUrlParam,
    errors: [400, 404],
    async handler({ params, principal }) {
      const url = decodedUrl(params.agentUrl);
      const [row] = await probeRows(c, [url], principal);
      if (!row) throw notFound(`agent ${url} is not in the catalog`);
      const board = storyboard(row);
      const status = COMPLIANCE_STATUS[row.compliance ?? 'unknown'] ?? 'unknown';
      const trackStatus = board.status === 'passing' ? 'pass' : board.status === 'untested' ? 'untested' : 'fail';
      return {
        agent_url: row.url,
        requested_compliance_target: null,
        adcp_version: null,
        status,
        lifecycle_stage: 'production',
        compliance_opt_out: false,
        badge_requalification_required: false,
        tracks: { core: trackStatus },
        track_details: [{ track: 'core', status: trackStatus, scenario_count: 1, passed_count: board.status === 'passing' ? 1 : 0, duration_ms: 0 }],
        streak_days: 0,
        last_checked_at: iso(row.last_checked_at),
        last_passed_at: iso(row.last_passed_at),
        last_failed_at: iso(row.last_failed_at),
        headline:
          status === 'passing'
            ? 'The capabilities answer conforms'
            : status === 'failing'
              ? `${(row.compliance_issues ?? []).length} issue(s) in the capabilities answer`
              : 'Not probed yet',
        status_changed_at: iso(row.compliance_changed_at),
        storyboards_passing: board.status === 'passing' ? 1 : 0,
        storyboards_total: 1,
        storyboard_statuses: [board],
        issues: row.compliance_issues ?? [],
      };
    },
  });

  const storyboardStatus = defineEndpoint({
    method: 'GET',
    path: '/api/registry/agents/{agentUrl}/storyboard-status',
    tool: 'get_agent_storyboard_status',
    success: { schema: storyboardStatusOut },
    summary: 'Per-storyboard results of an agent (agentUrl URL-encoded); members only',
    tags: ['Agent discovery'],
    auth: 'required',
    tier: 'member',
    params: agentUrlParam,
    errors: [400, 401, 403, 404],
    async handler({ params, principal }) {
      const url = decodedUrl(params.agentUrl);
      const [row] = await probeRows(c, [url], principal);
      if (!row) throw notFound(`agent ${url} is not in the catalog`);
      const boards = [storyboard(row)];
      return { agent_url: row.url, storyboards: boards, passing_count: boards.filter((b) => b.status === 'passing').length, total_count: boards.length };
    },
  });

  const bulk = defineEndpoint({
    method: 'POST',
    path: '/api/registry/agents/storyboard-status',
    tool: 'get_agent_storyboard_status_bulk',
    success: { schema: storyboardStatusBulkOut },
    summary: 'Per-storyboard results of up to 100 agents; members only. Agents not in the catalog are absent; unusable URLs are counted',
    tags: ['Agent discovery'],
    auth: 'required',
    tier: 'member',
    body: v.object({
      agent_urls: v.pipe(
        v.array(v.pipe(v.string('must be a string'), v.maxLength(2048)), 'must be an array of agent URLs'),
        v.minLength(1, 'must list at least one agent URL'),
        v.maxLength(100, 'accepts at most 100 agent URLs'),
      ),
    }),
    errors: [400, 401, 403],
    async handler({ body, principal }) {
      const byNormalized = new Map<string, string[]>();
      let invalidUrls = 0;
      for (const raw of body.agent_urls) {
        const url = normalizeAgentUrl(raw);
        if (!url) invalidUrls++;
        else byNormalized.set(url, [...(byNormalized.get(url) ?? []), raw]);
      }
      const rows = await probeRows(c, [...byNormalized.keys()], principal);
      const agents: Record<string, unknown[]> = {};
      // Keyed as the caller sent each URL (the client looks its own strings up).
      for (const row of rows) for (const asSent of byNormalized.get(row.url) ?? [row.url]) agents[asSent] = [storyboard(row)];
      return { agents, invalid_urls: invalidUrls };
    },
  });

  return [compliance, storyboardStatus, bulk];
}
