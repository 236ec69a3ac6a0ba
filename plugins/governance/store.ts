import { sql, type SqlFragment } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { GovernanceCondition, GovernanceFinding, GovernanceStatus } from '../../core/ports/governance.ts';
import type { Plan } from './plan-schema.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
import { wishRows } from '../../lib/batched-read.ts';

export interface PlanRow {
  owner: string;
  plan_id: string;
  version: number;
  status: 'active' | 'suspended' | 'completed';
  plan: Plan;
}

export interface CheckRow {
  check_id: string;
  plan_id: string;
  caller: string;
  tool: string | null;
  phase: string;
  /** `intent`: tool + payload from an orchestrator; `execution`: a seller's planned delivery or delivery report. */
  check_type: 'intent' | 'execution';
  purchase_type: string;
  status: GovernanceStatus;
  mode: string;
  explanation: string;
  findings: GovernanceFinding[];
  conditions: GovernanceCondition[];
  categories_evaluated: string[];
  policies_evaluated: string[];
  amount: number | null;
  governance_context: string;
  expires_at: Date | null;
  created_at: Date;
}

export interface OutcomeRow {
  outcome_id: string;
  plan_id: string;
  check_id: string | null;
  outcome: 'completed' | 'failed' | 'delivery';
  purchase_type: string;
  governance_context: string;
  seller_reference: string | null;
  committed_budget: number | null;
  created_at: Date;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));

export async function loadPlans(q: Queryable, owner: string, planIds: readonly string[], lock = false): Promise<Map<string, PlanRow>> {
  if (!planIds.length) return new Map();
  // One plan (the usual call) by its whole key: a cached generic plan of `plan_id = ANY(...)`, made while the
  // table was small, scans every plan of the owner (index on owner alone, plan_id filtered), slower with
  // each plan added. Several are planned with each run's values.
  const select = (which: SqlFragment) => sql`SELECT owner, plan_id, version, status, plan FROM governance_plans
    WHERE owner = ${owner}::text AND ${which} ${lock ? sql`FOR UPDATE` : sql.empty}`;
  const rows = await q.query<PlanRow>(
    planIds.length === 1 ? select(sql`plan_id = ${planIds[0]}::text`) : sql.planEachRun(select(sql`plan_id = ANY(${[...planIds]}::text[])`)),
  );
  return new Map(rows.map((r) => [r.plan_id, { ...r, version: Number(r.version) }]));
}

/** Insert or replace a plan; the version moves only when its content changed. */
export async function savePlan(
  tx: Queryable,
  owner: string,
  plan: Plan,
  existing: PlanRow | undefined,
  now: Date,
): Promise<{ version: number; action: 'created' | 'updated' | 'unchanged' }> {
  if (existing && canonicalJson(existing.plan) === canonicalJson(plan)) return { version: existing.version, action: 'unchanged' };
  const version = existing ? existing.version + 1 : 1;
  await tx.query(sql`
    INSERT INTO governance_plans (owner, plan_id, version, status, brand_domain, budget_total, currency, flight_start, flight_end, plan, created_at, updated_at)
    VALUES (${owner}::text, ${plan.plan_id}::text, ${version}::int, 'active', ${plan.brand.domain}::text, ${plan.budget.total}::numeric, ${plan.budget.currency}::text,
            ${plan.flight.start}::timestamptz, ${plan.flight.end}::timestamptz, ${plan}::jsonb, ${now}::timestamptz, ${now}::timestamptz)
    ON CONFLICT (owner, plan_id) DO UPDATE SET version = EXCLUDED.version, brand_domain = EXCLUDED.brand_domain, budget_total = EXCLUDED.budget_total,
      currency = EXCLUDED.currency, flight_start = EXCLUDED.flight_start, flight_end = EXCLUDED.flight_end, plan = EXCLUDED.plan, updated_at = EXCLUDED.updated_at`);
  return { version, action: existing ? 'updated' : 'created' };
}

/** Budget committed to a plan: what sellers reported as completed purchases. */
export async function committedBudgets(q: Queryable, owner: string, planIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await q.query<{ plan_id: string; committed: string }>(sql`
    SELECT plan_id, COALESCE(sum(committed_budget), 0)::text AS committed FROM governance_outcomes
    WHERE owner = ${owner}::text AND plan_id = ANY(${[...planIds]}::text[]) AND outcome = 'completed' GROUP BY plan_id`);
  return new Map(planIds.map((id) => [id, Number(rows.find((r) => r.plan_id === id)?.committed ?? 0)]));
}

/**
 * A plan as check_governance judges by it: with the budget its completed outcomes committed, and the
 * two fences a later check can be recorded under without reading them again (fencedInsertCheck).
 */
export interface PlanCommitted extends PlanRow {
  committed: number;
  /** The committed budget as the database sums it (compared as text: no rounding). */
  committedText: string;
  /** The row's version as the database keeps it (`xmin`): any write to the plan row changes it. */
  rowVersion: string;
}

/** A plan with the budget its completed outcomes committed, in one read (check_governance). */
export async function loadPlanCommitted(q: Queryable, owner: string, planId: string): Promise<PlanCommitted | undefined> {
  const [row] = await q.query<PlanRow & { committed: string; row_version: string }>(sql`
    SELECT p.owner, p.plan_id, p.version, p.status, p.plan, p.xmin::text AS row_version, (${COMMITTED}) AS committed
    FROM governance_plans p WHERE p.owner = ${owner}::text AND p.plan_id = ${planId}::text`);
  if (!row) return undefined;
  const { row_version, committed, ...plan } = row;
  return { ...plan, version: Number(row.version), committed: Number(committed), committedText: committed, rowVersion: row_version };
}

/** What the completed outcomes of plan row `p` committed, as text. */
const COMMITTED = sql`SELECT COALESCE(sum(o.committed_budget), 0)::text FROM governance_outcomes o
  WHERE o.owner = p.owner AND o.plan_id = p.plan_id AND o.outcome = 'completed'`;

const CHECK_COLUMNS = sql`check_id, owner, plan_id, plan_version, caller, tool, phase, check_type, purchase_type, status, mode, explanation, findings, conditions,
      categories_evaluated, policies_evaluated, amount, governance_context, expires_at, created_at`;
const checkValues = (
  owner: string,
  planVersion: number,
  c: CheckRow,
) => sql`${c.check_id}::text, ${owner}::text, ${c.plan_id}::text, ${planVersion}::int, ${c.caller}::text,
      ${c.tool}::text, ${c.phase}::text, ${c.check_type}::text, ${c.purchase_type}::text, ${c.status}::text, ${c.mode}::text, ${c.explanation}::text, ${c.findings}::jsonb,
      ${c.conditions}::jsonb, ${c.categories_evaluated}::text[], ${c.policies_evaluated}::text[], ${c.amount}::numeric, ${c.governance_context}::text,
      ${c.expires_at}::timestamptz, ${c.created_at}::timestamptz`;

export async function insertCheck(q: Queryable, owner: string, planVersion: number, c: CheckRow): Promise<void> {
  await q.query(sql`INSERT INTO governance_checks (${CHECK_COLUMNS}) VALUES (${checkValues(owner, planVersion, c)})`);
}

/**
 * Record a check judged by a plan read earlier, only if the plan row and its committed budget are
 * still what it was judged by (checked by the insert itself: one statement). False: nothing was
 * written; read the plan again and judge anew.
 */
export async function fencedInsertCheck(q: Queryable, owner: string, plan: PlanCommitted, c: CheckRow): Promise<boolean> {
  const rows = await q.query(sql`INSERT INTO governance_checks (${CHECK_COLUMNS})
    SELECT ${checkValues(owner, plan.version, c)} FROM governance_plans p
    WHERE p.owner = ${owner}::text AND p.plan_id = ${plan.plan_id}::text AND p.xmin::text = ${plan.rowVersion}::text AND (${COMMITTED}) = ${plan.committedText}::text
    RETURNING 1 AS recorded`);
  return rows.length > 0;
}

export async function findCheck(q: Queryable, owner: string, checkId: string): Promise<CheckRow | null> {
  const [row] = await q.query<CheckRow>(sql`SELECT * FROM governance_checks WHERE owner = ${owner}::text AND check_id = ${checkId}::text`);
  return row ? { ...row, amount: num(row.amount) } : null;
}

/** The latest purchase or modification check of a governed action (its governance context) on a plan. */
export async function latestCheckOf(q: Queryable, owner: string, planId: string, context: string): Promise<CheckRow | null> {
  const [row] = await q.query<CheckRow>(sql`SELECT * FROM governance_checks
    WHERE owner = ${owner}::text AND governance_context = ${context}::text AND plan_id = ${planId}::text
      AND phase <> 'delivery' ORDER BY created_at DESC, check_id DESC LIMIT 1`);
  return row ? { ...row, amount: num(row.amount) } : null;
}

export async function insertOutcome(q: Queryable, owner: string, o: OutcomeRow): Promise<void> {
  await q.query(sql`
    INSERT INTO governance_outcomes (outcome_id, owner, plan_id, check_id, outcome, purchase_type, governance_context, seller_reference, committed_budget, created_at)
    VALUES (${o.outcome_id}::text, ${owner}::text, ${o.plan_id}::text, ${o.check_id}::text, ${o.outcome}::text, ${o.purchase_type}::text, ${o.governance_context}::text,
      ${o.seller_reference}::text, ${o.committed_budget}::numeric, ${o.created_at}::timestamptz)`);
}

/** The record of a caller's plans (get_plan_audit_logs): the plans, budget committed to each, their checks and outcomes in order. */
export interface PlanRecords {
  plans: Map<string, PlanRow>;
  committed: Map<string, number>;
  checks: CheckRow[];
  outcomes: OutcomeRow[];
}

/** The records of each wanted owner's plans, in order, in one statement (however many readers ask at once). */
export async function planRecords(q: Queryable, wanted: ReadonlyArray<{ owner: string; plan_ids: readonly string[] }>): Promise<PlanRecords[]> {
  const rows = await q.query<{ plans: PlanRow[]; committed: Record<string, string>; checks: CheckRow[]; outcomes: OutcomeRow[] }>(sql`
    SELECT
      (SELECT COALESCE(json_agg(json_build_object('owner', p.owner, 'plan_id', p.plan_id, 'version', p.version, 'status', p.status, 'plan', p.plan)), '[]')
        FROM governance_plans p WHERE p.owner = r.owner AND p.plan_id = ANY(r.plan_ids)) AS plans,
      (SELECT COALESCE(json_object_agg(s.plan_id, s.committed), '{}') FROM (
        SELECT o.plan_id, sum(o.committed_budget)::text AS committed FROM governance_outcomes o
        WHERE o.owner = r.owner AND o.plan_id = ANY(r.plan_ids) AND o.outcome = 'completed' GROUP BY o.plan_id) s) AS committed,
      (SELECT COALESCE(json_agg(c ORDER BY c.created_at, c.check_id), '[]')
        FROM governance_checks c WHERE c.owner = r.owner AND c.plan_id = ANY(r.plan_ids)) AS checks,
      (SELECT COALESCE(json_agg(o ORDER BY o.created_at, o.outcome_id), '[]')
        FROM governance_outcomes o WHERE o.owner = r.owner AND o.plan_id = ANY(r.plan_ids)) AS outcomes
    FROM ${wishRows(wanted, 'owner text, plan_ids text[]')}
    ORDER BY r.i`);
  return rows.map((r, i) => ({
    plans: new Map(r.plans.map((p) => [p.plan_id, { ...p, version: Number(p.version) }])),
    committed: new Map(wanted[i]!.plan_ids.map((id) => [id, Number(r.committed[id] ?? 0)])),
    checks: r.checks.map((c) => ({ ...c, amount: num(c.amount), expires_at: date(c.expires_at), created_at: new Date(c.created_at) })),
    outcomes: r.outcomes.map((o) => ({ ...o, committed_budget: num(o.committed_budget), created_at: new Date(o.created_at) })),
  }));
}

/** Plans whose checks or outcomes carry one of these governance contexts. */
export async function plansOfContexts(q: Queryable, owner: string, contexts: readonly string[]): Promise<string[]> {
  const rows = await q.query<{ plan_id: string }>(sql`
    SELECT DISTINCT plan_id FROM governance_checks WHERE owner = ${owner}::text AND governance_context = ANY(${[...contexts]}::text[])
    UNION SELECT DISTINCT plan_id FROM governance_outcomes WHERE owner = ${owner}::text AND governance_context = ANY(${[...contexts]}::text[])`);
  return rows.map((r) => r.plan_id);
}
