import { ProtocolError } from '../../core/errors.ts';
import type { Json } from '../../core/task.ts';
import type { RightsDeps } from './deps.ts';

/** What a governed acquisition tells the governance agent. */
export interface RightsCommitment {
  owner: string;
  /** The account has a governance agent (sync_governance on this deployment's seller accounts). */
  governed: boolean;
  planId?: string;
  payload: Json;
  amount: number;
  currency: string;
  countries?: readonly string[];
  startDate?: string;
  endDate?: string;
  /** `purchase` for acquire_rights (default), `modification` for update_rights. */
  phase?: 'purchase' | 'modification';
  tool?: string;
}

/** The request as the governance agent sees it: webhook credentials are the buyer's secrets, not the plan's business. */
export function governedPayload(input: Record<string, unknown>): Json {
  const { revocation_webhook, push_notification_config: _push, ...rest } = input;
  const url = (revocation_webhook as { url?: string } | undefined)?.url;
  return { ...rest, ...(url ? { revocation_webhook: { url } } : {}) };
}

/**
 * Acquiring rights is a spending event: an account with a governance agent (sync_governance)
 * asks it, through the Governance port, before anything is written. Denied is GOVERNANCE_DENIED
 * with the agent's findings; an account without a governance agent is not asked.
 */
export async function consultGovernance(deps: RightsDeps, c: RightsCommitment): Promise<Json | null> {
  if (!c.governed && !c.planId) return null;
  if (!deps.governance)
    throw new ProtocolError('GOVERNANCE_UNAVAILABLE', 'This account is governed but this agent cannot reach a governance agent; retry later', {
      status: 503,
      recovery: 'transient',
    });
  if (!c.planId)
    throw new ProtocolError('INVALID_REQUEST', 'plan_id: is required: this account is governed (sync_governance), name the plan that funds this licence', {
      field: 'plan_id',
    });
  const decision = await deps.governance.check({
    owner: c.owner,
    plan_id: c.planId,
    caller: deps.agentUrl,
    tool: c.tool ?? 'acquire_rights',
    phase: c.phase ?? 'purchase',
    purchase_type: 'rights_license',
    payload: c.payload as Record<string, unknown>,
    planned_delivery: {
      total_budget: c.amount,
      currency: c.currency,
      ...(c.countries?.length ? { geo: { countries: [...c.countries] } } : {}),
      ...(c.startDate ? { start_time: `${c.startDate}T00:00:00Z` } : {}),
      ...(c.endDate ? { end_time: `${c.endDate}T23:59:59Z` } : {}),
    },
  });
  if (decision.status === 'denied') {
    throw new ProtocolError('GOVERNANCE_DENIED', `The governance agent denied this rights licence: ${decision.explanation}`.slice(0, 1000), {
      status: 403,
      field: 'plan_id',
      recovery: 'correctable',
      suggestion: 'Choose a pricing option that fits the plan (see details.findings), or update the plan',
      details: { plan_id: decision.plan_id, check_id: decision.check_id, findings: decision.findings as unknown as Json[] },
    });
  }
  return {
    plan_id: decision.plan_id,
    check_id: decision.check_id,
    status: decision.status,
    conditions: decision.conditions as unknown as Json[],
    governance_context: decision.governance_context ?? decision.check_id,
  };
}
