import { ProtocolError } from '../../../core/errors.ts';
import type { Json } from '../../../core/task.ts';
import type { GovernanceOutcome, GovernancePort } from '../../../core/ports/governance.ts';
import type { SalesDeps } from '../deps.ts';
import { createRemoteGovernance } from '../governance-client.ts';
import type { PlannedPackage } from './packages.ts';
import type { BuyGovernance } from './store.ts';

/**
 * The governance agent of an account: the one the buyer synced for it (sync_governance), called
 * with the credential synced with it; else the deployment's (configured or in-process), if any.
 */
async function governanceOf(deps: SalesDeps, accountId: string | undefined): Promise<GovernancePort | undefined> {
  const synced = accountId ? await deps.accounts.governanceAgent(deps.db, accountId) : undefined;
  if (!synced) return deps.governance;
  if (!deps.crawler) {
    throw new ProtocolError(
      'GOVERNANCE_UNAVAILABLE',
      'This seller makes no outbound requests: the governance agent synced for the account cannot be consulted',
      {
        status: 503,
        field: 'plan_id',
      },
    );
  }
  return createRemoteGovernance(deps.crawler, synced.url, synced.credentials);
}

/**
 * Ask the governance agent about a buy before anything is written: denied is GOVERNANCE_DENIED
 * (nothing written); approved with conditions proceeds, the conditions attached to the buy.
 * Without a plan_id nothing is asked, unless the seller requires one.
 */
export async function consultGovernance(
  deps: SalesDeps,
  request: {
    owner: string;
    accountId?: string;
    planId?: string;
    payload: Json;
    planned: readonly PlannedPackage[];
    total: number;
    currency: string;
    start: Date;
    end: Date;
  },
): Promise<BuyGovernance | null> {
  if (!request.planId) {
    // Looked up only when it matters: most buys name no plan on a seller that does not require one.
    if (deps.options.governanceRequired && (await governanceOf(deps, request.accountId)))
      throw new ProtocolError('INVALID_REQUEST', 'plan_id: is required: this seller consults a governance agent before every media buy', { field: 'plan_id' });
    return null;
  }
  const g = await governanceOf(deps, request.accountId);
  if (!g) return null;
  const channels = [...new Set(request.planned.flatMap((p) => p.product.channels))];
  const countries = [...new Set(request.planned.flatMap((p) => p.product.countries))];
  const decision = await g.check({
    owner: request.owner,
    plan_id: request.planId,
    caller: deps.options.agentUrl,
    tool: 'create_media_buy',
    phase: 'purchase',
    purchase_type: 'media_buy',
    payload: request.payload,
    planned_delivery: {
      total_budget: request.total,
      currency: request.currency,
      channels,
      ...(countries.length ? { geo: { countries } } : {}),
      start_time: request.start.toISOString(),
      end_time: request.end.toISOString(),
    },
  });
  if (decision.status === 'denied') {
    throw new ProtocolError('GOVERNANCE_DENIED', `The governance agent denied this media buy: ${decision.explanation}`.slice(0, 1000), {
      status: 403,
      field: 'plan_id',
      recovery: 'correctable',
      suggestion: 'Change the buy to fit the plan (see details.findings), or update the plan',
      details: { plan_id: decision.plan_id, check_id: decision.check_id, findings: decision.findings },
    });
  }
  return {
    plan_id: decision.plan_id,
    check_id: decision.check_id,
    status: decision.status,
    explanation: decision.explanation,
    conditions: decision.conditions as unknown as Json[],
    ...(decision.expires_at ? { expires_at: decision.expires_at } : {}),
    governance_context: decision.governance_context ?? decision.check_id,
  };
}

/** Tell the governance agent what became of a checked buy; a failure is logged (the buy stands). */
export async function reportGovernanceOutcome(
  deps: SalesDeps,
  owner: string,
  g: BuyGovernance,
  outcome: Omit<GovernanceOutcome, 'owner' | 'plan_id' | 'check_id' | 'governance_context'>,
  accountId?: string,
): Promise<void> {
  try {
    const governance = await governanceOf(deps, accountId);
    if (!governance) return;
    await governance.reportOutcome({ owner, plan_id: g.plan_id, check_id: g.check_id, governance_context: g.governance_context, ...outcome });
  } catch (error) {
    deps.logger.warn({ err: error, plan_id: g.plan_id, check_id: g.check_id }, 'governance outcome could not be reported');
  }
}
