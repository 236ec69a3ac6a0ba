import * as v from 'valibot';
import type { Queryable } from '../../core/ports/database.ts';
import type { AdServerEvent } from '../../core/ports/ad-server.ts';
import type { AdServerSimulationPort } from '../../core/ports/ad-server-simulation.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { Principal } from '../../core/ports/auth.ts';
import type { SalesDeps } from './deps.ts';
import { advance } from './lifecycle.ts';
import { createEventHandler, openImpairments } from './impairments.ts';
import { sendDelayedNow } from './reports.ts';
import { addHistory, loadBuy, loadPackages, TERMINAL, updateBuy, type BuyRow } from './buys/store.ts';
import { requireTransition } from './buys/status.ts';
import { cents } from './money.ts';

const id = v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128));
const count = v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0), v.maxValue(1e9)), 0);

/** The caller's buy, locked, in a sandbox; NOT_FOUND / FORBIDDEN otherwise. */
async function sandboxBuy(tx: Queryable, principal: Principal, mediaBuyId: string): Promise<BuyRow> {
  const b = await loadBuy(tx, mediaBuyId, principal.orgId, true);
  if (!b || b.status === 'pending_review') throw new ScenarioError('NOT_FOUND', `No media buy ${mediaBuyId} for this caller`, null);
  if (!b.sandbox) throw new ScenarioError('FORBIDDEN', `Media buy ${mediaBuyId} is not a sandbox buy`, b.status);
  return b;
}

/** Move a buy to `target` along the lifecycle's own transitions, as its time had come. */
async function forceStatus(tx: Queryable, deps: SalesDeps, b: BuyRow, target: string, now: Date): Promise<BuyRow> {
  if (target === b.status) return b;
  if (TERMINAL.has(b.status)) throw new ScenarioError('INVALID_TRANSITION', `A ${b.status} media buy cannot become ${target}`, b.status);
  const packages = (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)!;
  const serving = packages.filter((p) => !p.canceled && !p.paused).map((p) => p.package_id);
  let next = b;
  if (target === 'active' || target === 'completed') {
    if (next.status === 'pending_creatives') {
      next = { ...next, status: requireTransition(next.status, 'pending_start'), revision: next.revision + 1, updated_at: now };
      await addHistory(tx, {
        mediaBuyId: b.media_buy_id,
        revision: next.revision,
        at: now,
        actor: 'test controller',
        action: 'forced',
        summary: 'pending_start',
      });
    }
    if (next.status === 'paused' && target === 'active') {
      await deps.adServer.setState(tx, b.media_buy_id, 'live', now, serving);
      next = { ...next, status: requireTransition(next.status, 'active'), revision: next.revision + 1, updated_at: now };
      await addHistory(tx, { mediaBuyId: b.media_buy_id, revision: next.revision, at: now, actor: 'test controller', action: 'resumed' });
    }
    // The flight starts (and, for completed, ends) now: the lifecycle job's own transitions run.
    if (next.status === 'pending_start' && next.start_time > now) {
      await deps.adServer.amend(tx, b.media_buy_id, { startTime: now });
      next = { ...next, start_time: now };
    }
    if (target === 'completed') {
      await deps.adServer.amend(tx, b.media_buy_id, { endTime: now, ...(next.start_time > now ? { startTime: now } : {}) });
      next = { ...next, end_time: now };
    }
    await updateBuy(tx, b.media_buy_id, {
      status: next.status,
      revision: next.revision,
      start_time: next.start_time,
      end_time: next.end_time,
      updated_at: now,
    });
    await advance(tx, deps, next, now);
    return (await loadBuy(tx, b.media_buy_id, null))!;
  }
  if (target === 'paused') {
    if (b.status !== 'active') throw new ScenarioError('INVALID_TRANSITION', `Only an active media buy can be paused; this one is ${b.status}`, b.status);
    await deps.adServer.setState(tx, b.media_buy_id, 'paused', now, serving);
  } else if (target === 'canceled') {
    await deps.adServer.setState(tx, b.media_buy_id, 'ended', now);
  } else throw new ScenarioError('INVALID_TRANSITION', `The test controller does not force media buys to ${target}`, b.status);
  next = { ...b, status: requireTransition(b.status, target as BuyRow['status']), revision: b.revision + 1, updated_at: now };
  if (target === 'canceled') next = { ...next, ended_at: now, canceled_by: 'seller', cancellation_reason: 'Canceled by the test controller' };
  await updateBuy(tx, b.media_buy_id, {
    status: next.status,
    revision: next.revision,
    ended_at: next.ended_at,
    canceled_by: next.canceled_by,
    cancellation_reason: next.cancellation_reason,
    updated_at: now,
  });
  await addHistory(tx, { mediaBuyId: b.media_buy_id, revision: next.revision, at: now, actor: 'test controller', action: target });
  await advance(tx, deps, next, now);
  return (await loadBuy(tx, b.media_buy_id, null))!;
}

/** Lifetime delivery of a buy as the ad server reports it now. */
async function lifetime(q: Queryable, deps: SalesDeps, b: BuyRow, now: Date) {
  const [rep] = await deps.adServer.report(
    q,
    b.media_buy_id,
    [{ start: b.started_at ?? b.start_time, end: new Date(Math.max(now.getTime() + 1, (b.started_at ?? b.start_time).getTime() + 1)) }],
    now,
  );
  const sum = (k: 'impressions' | 'clicks' | 'spend' | 'conversions') => rep!.lines.reduce((s, l) => s + (l[k] ?? 0), 0);
  return { impressions: sum('impressions'), clicks: sum('clicks'), spend: cents(sum('spend')), conversions: sum('conversions') };
}

/** The time injected figures count at: just before now (so reports up to now, or a flight forced to end now, hold them), within the flight. */
function injectAt(b: BuyRow, now: Date): Date {
  const start = (b.started_at ?? b.start_time).getTime();
  return new Date(Math.max(start, Math.min(now.getTime() - 1, b.end_time.getTime() - 1)));
}

/**
 * The sales agent's sandbox controls (comply_test_controller): buy, account and creative
 * transitions, delivery and spend injected into the simulated ad server, impairments through the
 * ad server's event path, and a late report on the reporting channel. Only the caller's sandbox
 * entities are touched; every scenario runs in one transaction.
 */
export function salesScenarios(deps: SalesDeps, simulation: AdServerSimulationPort | undefined): TestScenario[] {
  const onEvent = createEventHandler(deps);
  const scenarios: TestScenario[] = [
    defineScenario({
      name: 'force_media_buy_status',
      protocol: 'media_buy',
      description: 'Move a sandbox buy to active, paused, completed or canceled now, through the lifecycle (webhooks and reports fire as they would)',
      params: v.object({
        media_buy_id: id,
        status: v.picklist(['active', 'paused', 'completed', 'canceled'], 'must be active, paused, completed or canceled'),
      }),
      async run({ params, principal }) {
        return deps.db.transaction(async (tx) => {
          const b = await sandboxBuy(tx, principal, params.media_buy_id);
          const next = await forceStatus(tx, deps, b, params.status, deps.clock.now());
          return { kind: 'transition', previous_state: b.status, current_state: next.status, message: `Media buy ${b.media_buy_id} is ${next.status}` };
        });
      },
    }),
    defineScenario({
      name: 'simulate_impairment',
      protocol: 'media_buy',
      description:
        'The ad server reports a resource of a sandbox buy offline (or serviceable again): health, get_media_buys impairments[] and the impairment webhook follow',
      params: v.object({
        media_buy_id: id,
        package_ids: v.optional(v.pipe(v.array(id), v.minLength(1))),
        resource_type: v.optional(v.picklist(['audience', 'creative', 'catalog_item', 'event_source', 'property']), 'property'),
        resource_id: v.optional(id, 'sandbox-resource'),
        severity: v.optional(v.picklist(['general', 'fraud', 'brand_safety']), 'general'),
        state: v.optional(v.picklist(['open', 'resolved']), 'open'),
        transition_to: v.optional(v.picklist(['suspended', 'rejected', 'withdrawn', 'insufficient', 'depublished']), 'depublished'),
        reason_code: v.optional(
          v.picklist([
            'policy_violation',
            'consent_expired',
            'ttl_expired',
            'pii_audit_failed',
            'seller_removed',
            'content_rejected',
            'identity_authorization_revoked',
            'identity_authorization_expired',
            'source_private',
            'source_offline',
            'property_depublished',
          ]),
          'property_depublished',
        ),
        reason: v.optional(v.pipe(v.string(), v.maxLength(500))),
      }),
      async run({ params, principal }) {
        return deps.db.transaction(async (tx) => {
          const b = await sandboxBuy(tx, principal, params.media_buy_id);
          if (TERMINAL.has(b.status)) throw new ScenarioError('INVALID_STATE', `Media buy ${b.media_buy_id} is ${b.status}: nothing serves`, b.status);
          const packages = (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)!.map((p) => p.package_id);
          const unknown = params.package_ids?.find((p) => !packages.includes(p));
          if (unknown) throw new ScenarioError('NOT_FOUND', `No package ${unknown} in media buy ${b.media_buy_id}`, b.status);
          const event: AdServerEvent = {
            type: 'impairment',
            mediaBuyId: b.media_buy_id,
            packageIds: params.package_ids ?? packages,
            resourceType: params.resource_type,
            resourceId: params.resource_id,
            severity: params.severity,
            state: params.state,
            offlineState: params.transition_to,
            reasonCode: params.reason_code,
            reason: params.reason ?? 'Injected by the test controller',
            observedAt: deps.clock.now(),
          };
          await onEvent(tx, event);
          const open = (await openImpairments(tx, [b.media_buy_id])).get(b.media_buy_id)!;
          return {
            kind: 'simulation',
            simulated: { impairment: { resource_type: event.resourceType, resource_id: event.resourceId, severity: event.severity, state: event.state } },
            cumulative: { health: open.length ? 'impaired' : 'ok', open_impairments: open.length },
          };
        });
      },
    }),
    defineScenario({
      name: 'simulate_delayed_report',
      protocol: 'media_buy',
      description: "The ad server's data for the current reporting window is late: a delayed report fires on the buy's reporting_webhook now",
      params: v.object({ media_buy_id: id }),
      async run({ params, principal }) {
        return deps.db.transaction(async (tx) => {
          const b = await sandboxBuy(tx, principal, params.media_buy_id);
          if (!b.reporting_webhook) throw new ScenarioError('INVALID_STATE', `Media buy ${b.media_buy_id} has no reporting_webhook`, b.status);
          if (!b.report_cursor || b.final_sent_at || TERMINAL.has(b.status))
            throw new ScenarioError('INVALID_STATE', `Media buy ${b.media_buy_id} is not reporting (${b.status})`, b.status);
          const now = deps.clock.now();
          const fired = await sendDelayedNow(tx, deps, b, now);
          await updateBuy(tx, b.media_buy_id, { report_seq: fired.sequence, delayed_window: b.report_cursor });
          return {
            kind: 'simulation',
            simulated: {
              notification_type: 'delayed',
              sequence_number: fired.sequence,
              reporting_period: { start: fired.period.start.toISOString(), end: fired.period.end.toISOString() },
            },
          };
        });
      },
    }),
  ];
  if (!simulation) return scenarios;
  const started = (b: BuyRow) => {
    if (!b.started_at) throw new ScenarioError('INVALID_STATE', `Media buy ${b.media_buy_id} has not started (${b.status}): force it active first`, b.status);
  };
  scenarios.push(
    defineScenario({
      name: 'simulate_delivery',
      protocol: 'media_buy',
      description: 'Add delivery to a started sandbox buy now (impressions, clicks, reported_spend, conversions), visible at once in get_media_buy_delivery',
      params: v.object({
        media_buy_id: id,
        package_id: v.optional(id),
        impressions: count,
        clicks: count,
        conversions: count,
        reported_spend: v.optional(
          v.object({ amount: v.pipe(v.number(), v.minValue(0), v.maxValue(1e9)), currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/)) }),
        ),
      }),
      async run({ params, principal }) {
        return deps.db.transaction(async (tx) => {
          let b = await sandboxBuy(tx, principal, params.media_buy_id);
          // Delivery means the buy serves: one not started yet goes live first, as at its start time.
          if (!b.started_at && !TERMINAL.has(b.status)) b = await forceStatus(tx, deps, b, 'active', deps.clock.now());
          started(b);
          if (params.reported_spend && params.reported_spend.currency !== b.currency)
            throw new ScenarioError('INVALID_PARAMS', `reported_spend must be in ${b.currency}`);
          const packages = (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)!.filter((p) => !p.canceled);
          const pkg = params.package_id ? packages.find((p) => p.package_id === params.package_id) : packages[0];
          if (!pkg) throw new ScenarioError('NOT_FOUND', `No package ${params.package_id ?? ''} to deliver on in media buy ${b.media_buy_id}`, b.status);
          const now = deps.clock.now();
          const at = injectAt(b, now);
          await simulation.addDelivery(
            tx,
            b.media_buy_id,
            pkg.package_id,
            { impressions: params.impressions, clicks: params.clicks, spend: params.reported_spend?.amount ?? 0 },
            at,
          );
          if (params.conversions) {
            const keys = Array.from({ length: Math.min(params.conversions, 10_000) }, () => ({ key: `sim:${deps.ids.uuid7()}`, eventType: 'purchase', at }));
            await deps.adServer.recordConversions(tx, [b.media_buy_id], keys);
          }
          const { conversions, ...simulated } = {
            impressions: params.impressions,
            clicks: params.clicks,
            conversions: params.conversions,
            reported_spend: params.reported_spend ?? { amount: 0, currency: b.currency },
          };
          return { kind: 'simulation', simulated: { ...simulated, ...(conversions ? { conversions } : {}) }, cumulative: await lifetime(tx, deps, b, now) };
        });
      },
    }),
    defineScenario({
      name: 'simulate_budget_spend',
      protocol: 'media_buy',
      description: 'Bring the spend of a started sandbox buy to a share of its budget now',
      params: v.object({ media_buy_id: id, spend_percentage: v.pipe(v.number(), v.minValue(0), v.maxValue(100, 'must be at most 100')) }),
      async run({ params, principal }) {
        return deps.db.transaction(async (tx) => {
          const b = await sandboxBuy(tx, principal, params.media_buy_id);
          started(b);
          const now = deps.clock.now();
          const target = Math.round(b.total_budget * params.spend_percentage) / 100;
          const before = await lifetime(tx, deps, b, now);
          const pkg = (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)!.find((p) => !p.canceled)!;
          const delta = Math.max(0, cents(target - before.spend));
          if (delta > 0) {
            const impressions = pkg.pricing_model === 'cpm' && pkg.rate > 0 ? Math.round((delta / pkg.rate) * 1000) : 0;
            await simulation.addDelivery(tx, b.media_buy_id, pkg.package_id, { impressions, clicks: 0, spend: delta }, injectAt(b, now));
          }
          return {
            kind: 'simulation',
            simulated: { spend_percentage: params.spend_percentage, computed_spend: target, budget: b.total_budget, currency: b.currency },
            cumulative: await lifetime(tx, deps, b, now),
          };
        });
      },
    }),
  );
  return scenarios;
}
