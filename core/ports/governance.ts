import { token } from '../token.ts';

/** The decision vocabulary of check_governance (enums/governance-decision.json). */
export type GovernanceStatus = 'approved' | 'denied' | 'conditions';

/** Why a check decided as it did: one rule of the plan that the proposal met or broke. */
export interface GovernanceFinding {
  category_id: string;
  policy_id?: string;
  severity: 'info' | 'warning' | 'critical';
  explanation: string;
}

/** What the caller must change or accept for a `conditions` decision to hold. */
export interface GovernanceCondition {
  field: string;
  required_value?: unknown;
  reason: string;
}

/** A proposed action, as a seller (or a brand agent licensing rights) submits it before committing (check-governance-request.json). */
export interface GovernanceCheck {
  /**
   * The organization whose plan is consulted: the buyer of the media buy. An adapter in the same
   * deployment scopes plans by it; a remote agent identifies the plan owner by its credential.
   */
  owner: string;
  plan_id: string;
  /** URL of the agent asking (the seller). */
  caller: string;
  tool: string;
  phase: 'purchase' | 'modification' | 'delivery';
  purchase_type: 'media_buy' | 'rights_license';
  /** The request the caller is about to execute. */
  payload: Record<string, unknown>;
  /** What the seller will deliver (core/planned-delivery.json): budget, channels, countries, flight. */
  planned_delivery?: {
    total_budget?: number;
    currency?: string;
    channels?: string[];
    geo?: { countries?: string[] };
    start_time?: string;
    end_time?: string;
  };
}

export interface GovernanceDecision {
  check_id: string;
  plan_id: string;
  status: GovernanceStatus;
  explanation: string;
  findings: GovernanceFinding[];
  conditions: GovernanceCondition[];
  /** ISO 8601; set when the decision lets the caller proceed. */
  expires_at?: string;
  /** Opaque correlation the caller passes back with the outcome. */
  governance_context?: string;
}

/** What became of a checked action (report-plan-outcome-request.json). */
export interface GovernanceOutcome {
  owner: string;
  plan_id: string;
  check_id?: string;
  outcome: 'completed' | 'failed';
  governance_context: string;
  seller_reference?: string;
  committed_budget?: number;
}

/**
 * A governance agent as a seller consults it before committing a buy. Adapters: the governance
 * plugin of the same deployment, and the sales plugin's MCP client of a remote governance agent.
 * Contract: `check` answers a decision, or throws ProtocolError PLAN_NOT_FOUND (the owner has no
 * such plan) or GOVERNANCE_UNAVAILABLE (the agent cannot be asked; the caller may retry).
 * `reportOutcome` records the committed budget against the plan (same errors).
 */
export interface GovernancePort {
  check(request: GovernanceCheck): Promise<GovernanceDecision>;
  reportOutcome(outcome: GovernanceOutcome): Promise<void>;
}

export const Governance = token<GovernancePort>('governance.agent');
