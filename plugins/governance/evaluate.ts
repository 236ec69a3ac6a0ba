import type { GovernanceCondition, GovernanceFinding, GovernanceStatus } from '../../core/ports/governance.ts';
import type { Plan } from './plan-schema.ts';

/** What a proposed action would commit, read from its payload and the seller's planned delivery. */
export interface Proposal {
  caller: string;
  amount?: number;
  currency?: string;
  channels: string[];
  countries: string[];
  start?: Date;
  end?: Date;
}

export type GovernanceMode = 'enforce' | 'advisory' | 'audit';

export interface Evaluation {
  status: GovernanceStatus;
  explanation: string;
  findings: GovernanceFinding[];
  conditions: GovernanceCondition[];
  categories_evaluated: string[];
  policies_evaluated: string[];
}

const round = (n: number) => Math.round(n * 100) / 100;

/** A policy is in force on `now`'s day (effective_date inclusive, sunset_date exclusive). */
function inForce(p: NonNullable<Plan['custom_policies']>[number], now: Date): boolean {
  const today = now.toISOString().slice(0, 10);
  return (!p.effective_date || p.effective_date <= today) && (!p.sunset_date || p.sunset_date > today);
}

/**
 * Judge a proposal against a plan, deterministically. Hard limits deny (critical findings): the
 * plan is not active, another currency, more than the budget left, a start outside the flight, a
 * channel the plan does not allow, a country outside the plan's, a seller not approved, and a
 * `must` policy whose named scope the proposal falls in. Soft limits approve with conditions: more
 * than `per_seller_max_pct` of the budget, an end after the flight, the plan's other policies (see
 * judgePolicies), and human review (the plan's or a policy's). Modes other than `enforce` never
 * block: the findings are kept and the answer is approved.
 */
export function evaluate(plan: Plan, status: string, committed: number, proposal: Proposal, mode: GovernanceMode, now: Date): Evaluation {
  const findings: GovernanceFinding[] = [];
  const conditions: GovernanceCondition[] = [];
  const categories = new Set<string>();
  const policies: string[] = [];
  const deny = (category_id: string, explanation: string, policy_id?: string) =>
    findings.push({ category_id, severity: 'critical', explanation, ...(policy_id ? { policy_id } : {}) });

  categories.add('plan_status');
  if (status !== 'active') deny('plan_status', `Plan ${plan.plan_id} is ${status}`);

  categories.add('budget_authority');
  const total = plan.budget.total;
  const remaining = round(total - committed);
  if (proposal.currency && proposal.currency !== plan.budget.currency) {
    deny('budget_authority', `The plan budgets in ${plan.budget.currency}; this purchase is in ${proposal.currency}`);
  } else if (proposal.amount !== undefined) {
    if (proposal.amount > remaining) {
      deny('budget_authority', `${proposal.amount} ${plan.budget.currency} exceeds the ${remaining} ${plan.budget.currency} left of the plan's ${total}`);
    } else if (plan.budget.per_seller_max_pct !== undefined && proposal.amount > (total * plan.budget.per_seller_max_pct) / 100) {
      const max = round((total * plan.budget.per_seller_max_pct) / 100);
      conditions.push({
        field: 'total_budget',
        required_value: max,
        reason: `At most ${plan.budget.per_seller_max_pct}% of the plan budget (${max} ${plan.budget.currency}) goes to one seller`,
      });
    }
  }

  categories.add('flight');
  const flightStart = new Date(plan.flight.start);
  const flightEnd = new Date(plan.flight.end);
  if (proposal.start && (proposal.start < flightStart || proposal.start >= flightEnd)) {
    deny('flight', `The purchase starts ${proposal.start.toISOString()}, outside the plan flight ${plan.flight.start} to ${plan.flight.end}`);
  } else if (proposal.end && proposal.end > flightEnd) {
    conditions.push({ field: 'end_time', required_value: flightEnd.toISOString(), reason: `The plan flight ends ${plan.flight.end}` });
  }

  if (plan.channels?.allowed) {
    categories.add('channel_mix');
    const outside = proposal.channels.filter((c) => !plan.channels!.allowed!.includes(c as never));
    if (outside.length) deny('channel_mix', `Channel(s) ${outside.join(', ')} are not allowed by the plan (allowed: ${plan.channels.allowed.join(', ')})`);
  }

  if (plan.countries) {
    categories.add('geography');
    const outside = proposal.countries.filter((c) => !plan.countries!.includes(c));
    if (outside.length) deny('geography', `Countries ${outside.join(', ')} are outside the plan's markets (${plan.countries.join(', ')})`);
  }

  if (plan.approved_sellers) {
    categories.add('seller_authorization');
    const caller = proposal.caller.replace(/\/+$/, '');
    if (!plan.approved_sellers.some((s) => s.replace(/\/+$/, '') === caller))
      deny('seller_authorization', `${proposal.caller} is not an approved seller of this plan`);
  }

  judgePolicies(plan, proposal, now, { findings, conditions, categories, policies }, true);

  if (plan.human_review_required) {
    categories.add('human_review');
    conditions.push({ field: 'human_review', required_value: true, reason: 'The plan requires a person to review each purchase before it goes live' });
  }

  return decide(
    { findings, conditions, categories, policies },
    mode,
    `Approved: within plan ${plan.plan_id} (${remaining} ${plan.budget.currency} left before this purchase)`,
  );
}

/** What the rules of one check found, before the decision. */
export interface Judgement {
  findings: GovernanceFinding[];
  conditions: GovernanceCondition[];
  categories: Set<string>;
  policies: string[];
}

/**
 * The plan's inline policies in force against what the action touches. A policy naming channels or
 * jurisdictions governs actions in them; one naming neither applies everywhere (policy-entry.json:
 * omitted channels mean all, no jurisdictions mean not jurisdiction-specific). Policy text cannot be
 * judged mechanically, so a `must` policy in scope that names its scope is taken as a prohibition
 * there (denied); a `must` or `should` policy without scope binds the caller instead (approved
 * with conditions: honour it); `may` policies are informational. `obligations` off (delivery
 * checks) leaves the unscoped ones out: they were attached when the action was approved.
 */
export function judgePolicies(plan: Plan, touched: Pick<Proposal, 'channels' | 'countries'>, now: Date, j: Judgement, obligations: boolean): void {
  for (const p of plan.custom_policies ?? []) {
    if (!inForce(p, now)) continue;
    j.policies.push(p.policy_id);
    j.categories.add('policy');
    const scoped = !!p.channels?.length || !!p.jurisdictions?.length;
    const channelHit = !p.channels?.length || p.channels.some((c) => touched.channels.includes(c));
    const countryHit = !p.jurisdictions?.length || p.jurisdictions.some((c) => touched.countries.includes(c));
    if (!channelHit || !countryHit || (!scoped && !obligations)) continue;
    const label = `${p.name ?? p.policy_id}: ${p.policy.slice(0, 300)}`;
    if (p.enforcement === 'may') {
      j.findings.push({ category_id: 'policy', policy_id: p.policy_id, severity: 'info', explanation: `Within the scope of policy ${label}` });
    } else if (p.enforcement === 'must' && scoped) {
      j.findings.push({ category_id: 'policy', policy_id: p.policy_id, severity: 'critical', explanation: `Violates policy ${label}` });
    } else if (scoped) {
      j.findings.push({ category_id: 'policy', policy_id: p.policy_id, severity: 'warning', explanation: `Conflicts with recommended policy ${label}` });
      j.conditions.push({ field: 'packages', reason: `Policy ${label}` });
    } else {
      j.findings.push({
        category_id: 'policy',
        policy_id: p.policy_id,
        severity: 'warning',
        explanation: `Policy ${p.policy_id} (${p.enforcement}) applies to every purchase of the plan and cannot be verified from the request`,
      });
      j.conditions.push({ field: 'packages', reason: `The purchase must honour policy ${label}` });
    }
    if (p.requires_human_review && obligations)
      j.conditions.push({ field: 'human_review', required_value: true, reason: `Policy ${p.policy_id} requires a person to review this purchase` });
  }
}

/** The decision from what the rules found: critical findings deny, conditions qualify; modes other than enforce never block. */
export function decide(j: Judgement, mode: GovernanceMode, approvedExplanation: string): Evaluation {
  const { findings, conditions } = j;
  const blocked = findings.some((f) => f.severity === 'critical');
  let decision: GovernanceStatus = blocked ? 'denied' : conditions.length ? 'conditions' : 'approved';
  let explanation =
    decision === 'denied'
      ? `Denied: ${findings
          .filter((f) => f.severity === 'critical')
          .map((f) => f.explanation)
          .join('; ')}`
      : decision === 'conditions'
        ? `Approved with conditions: ${conditions.map((c) => c.reason).join('; ')}`
        : approvedExplanation;
  // Conditions qualify an approval; a denial answers with its findings only (check-governance-response).
  if (decision === 'denied') conditions.length = 0;
  if (mode !== 'enforce' && decision !== 'approved') {
    explanation = `Approved (${mode} mode, not enforced); would be ${explanation}`;
    decision = 'approved';
    conditions.length = 0;
  }
  return {
    status: decision,
    explanation: explanation.slice(0, 2000),
    findings,
    conditions,
    categories_evaluated: [...j.categories],
    policies_evaluated: j.policies,
  };
}
