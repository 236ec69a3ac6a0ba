import * as v from 'valibot';
import { defineTask, type Json } from '../../core/task.ts';
import type { GovernanceService } from './service.ts';
import { versionFields } from './sync-plans.ts';
import { deliveryMetrics } from './delivery.ts';

const context = v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.regex(/^[\x20-\x7E]+$/, 'must be printable ASCII'));
const timestamp = v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 timestamp with a time zone'));
const money = v.pipe(v.number('must be a number'), v.finite(), v.minValue(0, 'must be at least 0'));

const plannedDelivery = v.looseObject({
  total_budget: v.optional(money),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'))),
  channels: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(50))),
  geo: v.optional(
    v.looseObject({
      countries: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code'))), v.maxLength(250))),
    }),
  ),
  start_time: v.optional(timestamp),
  end_time: v.optional(timestamp),
});

export const checkGovernanceInput = v.pipe(
  v.looseObject({
    ...versionFields,
    plan_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128)),
    caller: v.pipe(v.string('is required (the URL of the agent asking)'), v.maxLength(2048), v.url('must be an absolute URL')),
    purchase_type: v.optional(v.picklist(['media_buy', 'rights_license', 'signal_activation', 'creative_services'])),
    tool: v.optional(v.pipe(v.string(), v.maxLength(128))),
    payload: v.optional(v.record(v.string(), v.unknown(), 'must be an object')),
    governance_context: v.optional(context),
    phase: v.optional(v.picklist(['purchase', 'modification', 'delivery'], 'must be purchase, modification or delivery')),
    planned_delivery: v.optional(plannedDelivery),
    delivery_metrics: v.optional(deliveryMetrics),
    modification_summary: v.optional(v.pipe(v.string(), v.maxLength(1000))),
    invoice_recipient: v.optional(v.record(v.string(), v.unknown())),
  }),
  // check-governance-request: delivery_metrics "MUST be present for 'delivery' phase".
  v.forward(
    v.check((i) => i.phase !== 'delivery' || i.delivery_metrics !== undefined, 'is required for the delivery phase'),
    ['delivery_metrics'],
  ),
);

/**
 * check-governance-response: the decision is `status` in 3.0 and `verdict` in 3.1 (each version
 * requires its own and ignores the other): both are sent.
 */
export function renderDecision(d: Awaited<ReturnType<GovernanceService['check']>>): Json {
  const out: Json = {
    check_id: d.check_id,
    status: d.status,
    verdict: d.status,
    plan_id: d.plan_id,
    explanation: d.explanation,
    mode: d.row.mode,
    categories_evaluated: d.row.categories_evaluated,
    policies_evaluated: d.row.policies_evaluated,
    governance_context: d.row.governance_context,
  };
  if (d.findings.length) out.findings = d.findings;
  if (d.conditions.length) out.conditions = d.conditions;
  if (d.expires_at) out.expires_at = d.expires_at;
  return out;
}

export function checkGovernanceTask(service: GovernanceService) {
  return defineTask({
    name: 'check_governance',
    description:
      'Ask whether a proposed action (a media buy about to be created: its payload and planned delivery) fits a plan: approved, approved with conditions, or denied with findings. Every decision is kept in the plan audit log.',
    protocol: 'governance',
    requestSchema: 'governance/check-governance-request.json',
    input: checkGovernanceInput,
    async handler({ input, principal }) {
      // The answer's `status` is the decision (3.0), not the task's; the pipeline keeps it.
      return renderDecision(await service.check(principal.orgId, input));
    },
  });
}

export function reportPlanOutcomeTask(service: GovernanceService) {
  return defineTask({
    name: 'report_plan_outcome',
    description:
      "Report what became of a checked action (completed with its committed budget, failed, or delivery); completed purchases count against the plan's budget.",
    protocol: 'governance',
    requestSchema: 'governance/report-plan-outcome-request.json',
    mutating: true,
    input: v.looseObject({
      ...versionFields,
      plan_id: v.pipe(v.string('is required'), v.minLength(1), v.maxLength(128)),
      check_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
      purchase_type: v.optional(v.picklist(['media_buy', 'rights_license', 'signal_activation', 'creative_services'])),
      outcome: v.picklist(['completed', 'failed', 'delivery'], 'must be completed, failed or delivery'),
      seller_response: v.optional(v.looseObject({ seller_reference: v.optional(v.pipe(v.string(), v.maxLength(255))), committed_budget: v.optional(money) })),
      delivery: v.optional(v.record(v.string(), v.unknown())),
      error: v.optional(v.object({ code: v.optional(v.string()), message: v.optional(v.string()) })),
      governance_context: context,
    }),
    async handler({ input, principal }) {
      const r = await service.reportOutcome(principal.orgId, {
        plan_id: input.plan_id,
        check_id: input.check_id,
        outcome: input.outcome,
        purchase_type: input.purchase_type,
        governance_context: input.governance_context,
        seller_reference: input.seller_response?.seller_reference,
        committed_budget: input.seller_response?.committed_budget,
      });
      // 3.0 names the state `status`, 3.1 `outcome_state`: both are sent.
      const out: Json = {
        outcome_id: r.outcome_id,
        status: r.state,
        outcome_state: r.state,
        committed_budget: r.committed_budget,
        plan_summary: r.plan_summary,
      };
      if (r.findings.length) out.findings = r.findings;
      return out;
    },
  });
}
