import { ProtocolError } from '../../core/errors.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { GovernanceCheck, GovernanceDecision } from '../../core/ports/governance.ts';
import type { Json } from '../../core/task.ts';
import { evaluate, type GovernanceMode, type Proposal } from './evaluate.ts';
import { evaluateDelivery, type DeliveryMetrics } from './delivery.ts';
import {
  committedBudgets,
  fencedInsertCheck,
  findCheck,
  insertCheck,
  insertOutcome,
  latestCheckOf,
  loadPlanCommitted,
  loadPlans,
  type CheckRow,
  type PlanCommitted,
} from './store.ts';

export interface GovernanceDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  mode: GovernanceMode;
  /** How long an approval holds. */
  checkTtlSeconds: number;
}

export type CheckRequest = Omit<GovernanceCheck, 'owner' | 'phase' | 'purchase_type' | 'payload' | 'tool'> & {
  tool?: string;
  phase?: string;
  purchase_type?: string;
  payload?: Json;
  /** The caller's correlation of a governed action across its checks and outcomes. */
  governance_context?: string;
  /** What was delivered so far: the subject of a `delivery` phase check. */
  delivery_metrics?: DeliveryMetrics;
};

export interface OutcomeRequest {
  plan_id: string;
  check_id?: string;
  outcome: 'completed' | 'failed' | 'delivery';
  purchase_type?: string;
  governance_context: string;
  seller_reference?: string;
  committed_budget?: number;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const time = (v: unknown, now: Date) => (v === 'asap' ? now : typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v) : undefined);

/** What the proposal commits: the seller's planned delivery first, else what the payload says. */
export function proposalOf(request: CheckRequest, now: Date): Proposal {
  const pd = request.planned_delivery ?? {};
  const payload = (request.payload ?? {}) as Record<string, any>;
  const packages: any[] = Array.isArray(payload.packages) ? payload.packages : [];
  const packageSum = packages.length && packages.every((p) => num(p?.budget) !== undefined) ? packages.reduce((s, p) => s + p.budget, 0) : undefined;
  return {
    caller: request.caller,
    amount: num(pd.total_budget) ?? num(payload.total_budget?.amount) ?? num(payload.total_budget) ?? packageSum,
    currency: str(pd.currency) ?? str(payload.total_budget?.currency),
    channels: Array.isArray(pd.channels) ? pd.channels.filter((c): c is string => typeof c === 'string') : [],
    countries: Array.isArray(pd.geo?.countries) ? pd.geo!.countries.filter((c): c is string => typeof c === 'string') : [],
    start: time(pd.start_time, now) ?? time(payload.start_time, now),
    end: time(pd.end_time, now) ?? time(payload.end_time, now),
  };
}

/** Plans kept for fenced checks (they are small; a full map starts over). */
const PLANS_KEPT = 1000;

const planNotFound = (planId: string) =>
  new ProtocolError('PLAN_NOT_FOUND', `No governance plan ${planId.slice(0, 128)} for this caller`, {
    status: 404,
    field: 'plan_id',
    suggestion: 'Create it with sync_plans',
  });

/** The plans, checks and outcomes behind the tasks and the Governance port, scoped by owning organization. */
export function createGovernanceService(deps: GovernanceDeps) {
  /**
   * The plans checks were last judged by, per owner and plan: a check judged by one is recorded by
   * an insert that verifies the plan row and its committed budget are unchanged (one statement
   * instead of a read and a write; multi-instance safe, the fence is in the database).
   */
  const plans = new Map<string, PlanCommitted>();

  /** The decision on a request by a plan, and the check row that records it. */
  const judge = (plan: PlanCommitted, request: CheckRequest, now: Date): GovernanceDecision & { row: CheckRow } => {
    const delivery = request.phase === 'delivery';
    if (delivery && !request.delivery_metrics) {
      throw new ProtocolError('INVALID_REQUEST', 'delivery_metrics: is required for the delivery phase', { status: 400, field: 'delivery_metrics' });
    }
    const proposal = proposalOf(request, now);
    const result = delivery
      ? evaluateDelivery(plan.plan, plan.status, request.delivery_metrics!, deps.mode, now)
      : evaluate(plan.plan, plan.status, plan.committed, proposal, deps.mode, now);
    const id = deps.ids.uuid7().replace(/-/g, '');
    const row: CheckRow = {
      check_id: `chk_${id}`,
      plan_id: plan.plan_id,
      caller: request.caller,
      tool: request.tool ?? null,
      phase: request.phase ?? 'purchase',
      // check-governance-request: "the presence of tool+payload identifies an intent check".
      check_type: request.tool && request.payload ? 'intent' : 'execution',
      purchase_type: request.purchase_type ?? 'media_buy',
      status: result.status,
      mode: deps.mode,
      explanation: result.explanation,
      findings: result.findings,
      conditions: result.conditions,
      categories_evaluated: result.categories_evaluated,
      policies_evaluated: result.policies_evaluated,
      // A delivery report commits nothing new: only purchases carry the amount an outcome is held to.
      amount: delivery ? null : (proposal.amount ?? null),
      governance_context: request.governance_context ?? `gov_${id}`,
      expires_at: result.status === 'denied' ? null : new Date(now.getTime() + deps.checkTtlSeconds * 1000),
      created_at: now,
    };
    return {
      row,
      check_id: row.check_id,
      plan_id: row.plan_id,
      status: row.status,
      explanation: row.explanation,
      findings: row.findings,
      conditions: row.conditions,
      ...(row.expires_at ? { expires_at: row.expires_at.toISOString() } : {}),
      governance_context: row.governance_context,
    };
  };

  return {
    /** Judge a proposal against the owner's plan and record the decision (the audit log). */
    async check(owner: string, request: CheckRequest): Promise<GovernanceDecision & { row: CheckRow }> {
      const now = deps.clock.now();
      const key = `${owner}\u0000${request.plan_id}`;
      const known = plans.get(key);
      if (known) {
        // Judged by the plan as last read; recorded only if the plan and its committed budget are unchanged.
        const decided = judge(known, request, now);
        if (await fencedInsertCheck(deps.db, owner, known, decided.row)) return decided;
        plans.delete(key);
      }
      const plan = await loadPlanCommitted(deps.db, owner, request.plan_id);
      if (!plan) throw planNotFound(request.plan_id);
      if (plans.size >= PLANS_KEPT) plans.clear();
      plans.set(key, plan);
      const decided = judge(plan, request, now);
      await insertCheck(deps.db, owner, plan.version, decided.row);
      return decided;
    },

    /** Record what became of a checked action; a completed purchase commits its budget to the plan. */
    async reportOutcome(owner: string, o: OutcomeRequest) {
      const now = deps.clock.now();
      const plan = (await loadPlans(deps.db, owner, [o.plan_id])).get(o.plan_id);
      if (!plan) throw planNotFound(o.plan_id);
      const named = o.check_id ? await findCheck(deps.db, owner, o.check_id) : null;
      if (o.check_id && (!named || named.plan_id !== o.plan_id)) {
        throw new ProtocolError('REFERENCE_NOT_FOUND', `No check ${o.check_id.slice(0, 128)} of plan ${o.plan_id.slice(0, 128)}`, {
          status: 404,
          field: 'check_id',
        });
      }
      // Without a check_id (required for completed outcomes, yet callers omit it), the action's latest purchase check stands in.
      const check = named ?? (await latestCheckOf(deps.db, owner, o.plan_id, o.governance_context));
      const findings: Json[] = [];
      if (o.outcome === 'completed' && !check) {
        findings.push({
          category_id: 'budget_authority',
          severity: 'warning',
          explanation: `No check_governance decision on record for governance context ${o.governance_context.slice(0, 128)}: this purchase was not approved here`,
        });
      }
      if (o.outcome === 'completed' && check?.status === 'denied') {
        findings.push({
          category_id: 'budget_authority',
          severity: 'critical',
          explanation: `Check ${check.check_id} denied this purchase, yet it was completed`,
        });
      }
      if (o.outcome === 'completed' && check?.amount !== null && check?.amount !== undefined && (o.committed_budget ?? 0) > check.amount) {
        findings.push({
          category_id: 'budget_authority',
          severity: 'warning',
          explanation: `Committed ${o.committed_budget} is more than the ${check.amount} checked`,
        });
      }
      const outcomeId = `out_${deps.ids.uuid7().replace(/-/g, '')}`;
      await insertOutcome(deps.db, owner, {
        outcome_id: outcomeId,
        plan_id: o.plan_id,
        check_id: check?.check_id ?? null,
        outcome: o.outcome,
        purchase_type: o.purchase_type ?? 'media_buy',
        governance_context: o.governance_context,
        seller_reference: o.seller_reference ?? null,
        committed_budget: o.outcome === 'completed' ? (o.committed_budget ?? check?.amount ?? 0) : null,
        created_at: now,
      });
      const committed = (await committedBudgets(deps.db, owner, [o.plan_id])).get(o.plan_id)!;
      return {
        outcome_id: outcomeId,
        state: findings.length ? ('findings' as const) : ('accepted' as const),
        committed_budget: o.outcome === 'completed' ? (o.committed_budget ?? check?.amount ?? 0) : 0,
        findings,
        plan_summary: { total_committed: committed, budget_remaining: Math.round((plan.plan.budget.total - committed) * 100) / 100 },
      };
    },
  };
}

export type GovernanceService = ReturnType<typeof createGovernanceService>;
