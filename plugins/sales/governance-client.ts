import { ProtocolError } from '../../core/errors.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { GovernanceDecision, GovernancePort } from '../../core/ports/governance.ts';
import { connectAgent, describeFailure } from '../../lib/agent-clients/session.ts';
import { McpToolError } from '../../lib/agent-clients/mcp.ts';

const LIMITS = { timeoutMs: 10_000, maxBytes: 1024 * 1024 };
const DECISIONS = new Set(['approved', 'denied', 'conditions']);

const unavailable = (why: string) =>
  new ProtocolError('GOVERNANCE_UNAVAILABLE', `The governance agent could not be consulted (${why.slice(0, 200)}); retry later`, {
    status: 503,
    recovery: 'transient',
    field: 'plan_id',
  });

/**
 * The Governance port over a remote governance agent: MCP tool calls through the SSRF-guarded
 * crawler, authenticated with the credential the plan owner issued for this seller (plans are
 * the owner's: the agent finds them by that credential). PLAN_NOT_FOUND is passed on; anything
 * else that fails is GOVERNANCE_UNAVAILABLE.
 */
export function createRemoteGovernance(crawler: CrawlerPort, url: string, token: string): GovernancePort {
  const call = async (tool: string, args: Record<string, unknown>): Promise<Record<string, any>> => {
    let result: unknown;
    try {
      const session = await connectAgent(crawler, url, 'mcp', { ...LIMITS, headers: { authorization: `Bearer ${token}` } });
      result = await session.call(tool, args);
    } catch (error) {
      const body = error instanceof McpToolError ? error.body : null;
      if ((body?.code ?? (body?.errors as any)?.[0]?.code) === 'PLAN_NOT_FOUND') {
        throw new ProtocolError('PLAN_NOT_FOUND', String(body?.message ?? 'No such governance plan').slice(0, 300), { status: 404, field: 'plan_id' });
      }
      throw unavailable(describeFailure(error));
    }
    if (!result || typeof result !== 'object' || Array.isArray(result)) throw unavailable(`${tool} answered no object`);
    return result as Record<string, any>;
  };
  return {
    async check(request) {
      const { owner: _owner, ...args } = request;
      const r = await call('check_governance', args);
      // 3.1 agents answer `verdict`, 3.0 agents `status`.
      const status = typeof r.verdict === 'string' ? r.verdict : r.status;
      if (!DECISIONS.has(status) || typeof r.check_id !== 'string') throw unavailable('check_governance answered no decision');
      const decision: GovernanceDecision = {
        check_id: r.check_id,
        plan_id: typeof r.plan_id === 'string' ? r.plan_id : request.plan_id,
        status,
        explanation: typeof r.explanation === 'string' ? r.explanation.slice(0, 2000) : status,
        findings: Array.isArray(r.findings) ? r.findings.slice(0, 50) : [],
        conditions: Array.isArray(r.conditions) ? r.conditions.slice(0, 50) : [],
      };
      if (typeof r.expires_at === 'string') decision.expires_at = r.expires_at;
      if (typeof r.governance_context === 'string') decision.governance_context = r.governance_context;
      return decision;
    },
    async reportOutcome(o) {
      const { owner: _owner, seller_reference, committed_budget, ...rest } = o;
      await call('report_plan_outcome', {
        ...rest,
        idempotency_key: `outcome-${crypto.randomUUID()}`,
        purchase_type: 'media_buy',
        seller_response: { ...(seller_reference ? { seller_reference } : {}), ...(committed_budget !== undefined ? { committed_budget } : {}) },
      });
    },
  };
}
