import * as v from 'valibot';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { Order } from '../../../core/ports/ad-server.ts';
import type { SalesDeps } from '../deps.ts';
import { accountRef, brandRef, timestamp, versionFields } from '../../../lib/adcp/request-fields.ts';
import { money, packageRequest, pushConfig, reportingWebhook } from '../schemas.ts';
import { checkMeasurementTerms } from '../measurement-terms.ts';
import { sealChannel } from '../channels.ts';
import { dueAt } from './due.ts';
import { needsCreatives, planPackages, writePackages, writtenInSteps } from './packages.ts';
import { addHistory, insertBuy, loadBuy, loadPackages, newBuy, updateBuy, type BuyRow, type ChannelConfig, type ReportingConfig } from './store.ts';
import { renderBuy } from './render.ts';
import { requireAdServer } from '../upstream.ts';
import { requireTransition } from './status.ts';
import { consultGovernance, reportGovernanceOutcome } from './governance.ts';
import { findProposal, proposalPackages } from '../proposals.ts';
import { takeForcedArm } from '../forced-arms.ts';
import { cents } from '../money.ts';
import { pipelined } from '../../../lib/pipelined.ts';

const DAY = 86_400_000;

export const createMediaBuyInput = v.object({
  ...versionFields,
  account: accountRef,
  brand: v.optional(brandRef),
  proposal_id: v.optional(v.pipe(v.string(), v.maxLength(255))),
  plan_id: v.optional(v.pipe(v.string(), v.maxLength(255))),
  start_time: v.union([v.literal('asap'), timestamp], 'must be "asap" or an ISO 8601 timestamp'),
  end_time: timestamp,
  // Or proposal_id + total_budget: the proposal's allocations become the packages.
  packages: v.optional(
    v.pipe(v.array(packageRequest, 'must be an array of packages'), v.minLength(1, 'must not be empty'), v.maxLength(50, 'accepts at most 50 packages')),
  ),
  total_budget: v.optional(v.object({ amount: money, currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')) })),
  po_number: v.optional(v.pipe(v.string(), v.maxLength(128))),
  push_notification_config: v.optional(pushConfig),
  reporting_webhook: v.optional(reportingWebhook),
});

/** Refuse now any channel registration delivery would refuse later (HMAC strength, schemes). */
export function checkChannel(
  deps: SalesDeps,
  config: { url: string; operation_id?: string; authentication?: { schemes: string[]; credentials: string } } | undefined,
  field: string,
): void {
  if (!config) return;
  if (!deps.notifier)
    throw new ProtocolError('UNSUPPORTED_FEATURE', 'This agent sends no webhooks; poll get_media_buys and get_media_buy_delivery instead', { field });
  try {
    deps.notifier.checkRegistration({ push: config, mutating: false });
  } catch (error) {
    if (error instanceof ProtocolError && error.field) {
      throw new ProtocolError(error.code, error.message.replace(/push_notification_config/g, field), {
        field: error.field.replace('push_notification_config', field),
      });
    }
    throw error;
  }
}

/** The packages a committed proposal of this caller makes of `amount` (REFERENCE_NOT_FOUND when it has none of that id). */
async function packagesOfProposal(deps: SalesDeps, owner: string, accountId: string, proposalId: string, amount: number, now: Date) {
  const proposal = await findProposal(deps.db, owner, accountId, proposalId);
  if (!proposal) {
    // PROPOSAL_NOT_FOUND is 3.1 only: a code both versions define, the 3.1 one in details.
    throw new ProtocolError('REFERENCE_NOT_FOUND', `No proposal ${proposalId.slice(0, 128)} for this account`, {
      status: 404,
      field: 'proposal_id',
      details: { code: 'PROPOSAL_NOT_FOUND' },
      suggestion: 'Use a proposal_id from get_products, finalized with buying_mode refine',
    });
  }
  return proposalPackages(deps, proposal, amount, now);
}

export function createMediaBuyTask(deps: SalesDeps) {
  const delayMs = () => deps.adServer.reporting.expectedDelayMinutes * 60_000;
  return defineTask({
    name: 'create_media_buy',
    description:
      'Buy packages of products (or a finalized proposal: proposal_id + total_budget) for an account and a flight (start_time asap or a timestamp, end_time). Answers the media buy (pending_creatives or pending_start, then active at the start time), or submitted when the seller reviews large orders first. push_notification_config receives lifecycle and impairment webhooks; reporting_webhook receives delivery reports.',
    protocol: 'media_buy',
    mutating: true,
    // The buy's rows and its answer for replays commit together with the key, claimed first only for
    // what that transaction would not undo (a governance check, a sandbox directive taken).
    recordsKeyWithin: true,
    input: createMediaBuyInput,
    async handler({ input, principal, clock, ids, context, task, idempotency }) {
      const owner = principal.orgId;
      await requireAdServer(deps, principal.id, 'create_media_buy');
      if (!input.packages === !input.proposal_id)
        throw new ProtocolError('INVALID_REQUEST', 'packages: send either packages or a proposal_id with total_budget', { field: 'packages' });
      if (input.proposal_id && !input.total_budget)
        throw new ProtocolError('INVALID_REQUEST', 'total_budget: is required with proposal_id (the proposal splits it by its allocations)', {
          field: 'total_budget',
        });
      if ((input.packages?.length ?? 0) > deps.options.maxPackages) {
        throw new ProtocolError('INVALID_REQUEST', `packages: this seller accepts at most ${deps.options.maxPackages} packages per media buy`, {
          field: 'packages',
        });
      }
      // Terms are negotiated before anything else: the buyer's retry corrects only them.
      for (const [i, p] of (input.packages ?? []).entries()) checkMeasurementTerms(p.measurement_terms, `packages[${i}].measurement_terms`);
      const account = await deps.accounts.resolve(deps.db, owner, input.account);
      const now = clock.now();
      const packages = input.proposal_id
        ? await packagesOfProposal(deps, owner, account.account_id, input.proposal_id, input.total_budget!.amount, now)
        : input.packages!;
      const asap = input.start_time === 'asap';
      const start = asap ? now : new Date(input.start_time);
      const end = new Date(input.end_time);
      if (!asap && start.getTime() < now.getTime() - 5 * 60_000) {
        throw new ProtocolError('INVALID_REQUEST', 'start_time: is in the past; send "asap" to start now', { field: 'start_time' });
      }
      if (end <= start) throw new ProtocolError('INVALID_REQUEST', 'end_time: must be after start_time', { field: 'end_time' });
      if (end.getTime() - start.getTime() > 2 * 366 * DAY)
        throw new ProtocolError('INVALID_REQUEST', 'end_time: a flight lasts at most two years', { field: 'end_time' });
      checkChannel(deps, input.push_notification_config, 'push_notification_config');
      checkChannel(deps, input.reporting_webhook, 'reporting_webhook');
      if (input.reporting_webhook && !deps.adServer.reporting.granularities.includes(input.reporting_webhook.reporting_frequency)) {
        throw new ProtocolError(
          'UNSUPPORTED_GRANULARITY',
          `reporting_webhook.reporting_frequency: ${input.reporting_webhook.reporting_frequency} reports are not available`,
          { field: 'reporting_webhook.reporting_frequency' },
        );
      }

      const mediaBuyId = `mb_${ids.uuid7().replace(/-/g, '')}`;
      const planned = await planPackages(deps, owner, account.account_id, packages, 'packages', mediaBuyId, 0, input.total_budget?.currency ?? null, now);
      const total = cents(planned.reduce((s, p) => s + p.row.budget, 0));
      if (input.total_budget && total > input.total_budget.amount) {
        throw new ProtocolError('INVALID_REQUEST', `total_budget.amount: the packages add up to ${total}, more than ${input.total_budget.amount}`, {
          field: 'total_budget.amount',
        });
      }
      const sandbox = deps.options.sandbox || account.sandbox || (('sandbox' in input.account && input.account.sandbox) ?? false);
      // A governance agent records the check: a duplicate must not make another.
      if (input.plan_id) await idempotency.claim?.();
      // Last check before anything is written: a denial writes nothing here (the agent keeps its audit entry).
      const governance = await consultGovernance(deps, {
        owner,
        accountId: account.account_id,
        planId: input.plan_id,
        payload: {
          account: input.account,
          ...(input.brand ? { brand: input.brand } : {}),
          start_time: input.start_time,
          end_time: input.end_time,
          packages: packages.map((p) => ({ product_id: p.product_id, pricing_option_id: p.pricing_option_id, budget: p.budget })),
          total_budget: { amount: total, currency: planned[0]!.row.currency },
        },
        planned,
        total,
        currency: planned[0]!.row.currency,
        start,
        end,
      });
      const push: ChannelConfig | null = input.push_notification_config
        ? await sealChannel(deps.box, { ...input.push_notification_config, registered_by: 'create_media_buy' })
        : null;
      const reporting: ReportingConfig | null = input.reporting_webhook
        ? await sealChannel(deps.box, { ...input.reporting_webhook, registered_by: 'create_media_buy' })
        : null;
      const order: Order = { mediaBuyId, owner, startTime: start, endTime: end, lines: planned.map((p) => p.line) };
      const status = needsCreatives(planned.map((p) => p.row)) ? 'pending_creatives' : 'pending_start';
      const buy = newBuy(
        {
          media_buy_id: mediaBuyId,
          owner,
          account_id: account.account_id,
          // The advertiser of this buy: an account (a billing relationship) may buy for several brands.
          brand_domain: input.brand?.domain ?? account.brand_domain,
          status,
          currency: planned[0]!.row.currency,
          total_budget: total,
          start_time: start,
          end_time: end,
          asap,
          sandbox,
          po_number: input.po_number ?? null,
          push_config: push,
          reporting_webhook: reporting,
          context: context ?? null,
          governance,
        },
        now,
      );
      // Issued together, the buy first (its packages and history refer to it): one round trip.
      const write = (tx: Queryable, row: BuyRow) =>
        pipelined([
          insertBuy(tx, row),
          writePackages(deps, tx, owner, account.account_id, planned, now),
          addHistory(tx, {
            mediaBuyId,
            revision: 1,
            at: now,
            actor: principal.orgName,
            action: 'created',
            summary: `${planned.length} package(s), ${total} ${row.currency}`,
          }),
        ]);

      // A sandbox directive (comply_test_controller force_create_media_buy_arm) sends this buy through the review.
      // Taking it commits on its own: the key is claimed first.
      if (account.sandbox) await idempotency.claim?.();
      const forced = account.sandbox ? await takeForcedArm(deps.db, owner, account.account_id) : undefined;
      if (forced || deps.adServer.requiresReview(order)) {
        // The seller reviews first: the buy is recorded (unlisted) with the task, confirmed or rejected later.
        return task.defer({
          status: 'submitted',
          message: forced?.message ?? 'The seller reviews this media buy before confirming it',
          ...(forced ? { handle: forced.task_id } : {}),
          state: { media_buy_id: mediaBuyId },
          within: async (tx) => {
            await pipelined([deps.adServer.book(tx, order), write(tx, { ...buy, status: 'pending_review', confirmed_at: null })]);
          },
        });
      }
      // The key is echoed so a buyer can file the answer under it (replays return the same body).
      const result: Json = {
        ...renderBuy(
          buy,
          planned.map((p) => p.row),
        ),
        ...(input.proposal_id ? { proposal_id: input.proposal_id } : {}),
        ...(idempotency.key ? { idempotency_key: idempotency.key } : {}),
        // Packages booked whose targeting leaves no inventory (their property lists name none of their publishers).
        ...(planned.some((p) => p.note) ? { message: planned.flatMap((p) => (p.note ? [p.note] : [])).join(' ') } : {}),
      };
      // Without governance nothing follows the buy's transaction: the answer for replays commits with it.
      const keep = governance ? undefined : idempotency.keepWithin;
      try {
        await deps.db.transaction(async (tx) => {
          // The buy's rows (and the answer kept) go with the booking, and only its decision is waited for:
          // COMMIT follows them (one round trip); a failed write fails the transaction, a refused booking rolls it back.
          const booked = deps.adServer.book(tx, order);
          const written = write(tx, { ...buy, due_at: dueAt(buy, delayMs()) });
          for (const w of [booked, written, keep?.(tx, result)]) w?.catch(() => {});
          // Packages written in steps are waited for: every statement must be issued before the callback returns.
          if (planned.some(writtenInSteps)) await written;
          const booking = await booked;
          if (booking.decision === 'rejected')
            throw new ProtocolError(booking.code ?? 'POLICY_VIOLATION', `The seller refused this media buy: ${booking.reason}`, { recovery: 'terminal' });
          if (booking.decision === 'pending_review')
            throw new ProtocolError('SERVICE_UNAVAILABLE', 'The ad server asked for a review the seller did not expect; retry later', {
              recovery: 'transient',
            });
        });
      } catch (error) {
        if (governance) await reportGovernanceOutcome(deps, owner, governance, { outcome: 'failed' }, account.account_id);
        throw error;
      }
      if (governance) {
        await reportGovernanceOutcome(
          deps,
          owner,
          governance,
          { outcome: 'completed', seller_reference: mediaBuyId, committed_budget: total },
          account.account_id,
        );
      }
      return result;
    },
    async resume({ state, clock, reschedule }) {
      const id = state.media_buy_id as string;
      const now = clock.now();
      const outcome = await deps.db.transaction(async (tx): Promise<{ wait?: Date; rejected?: { code: string; reason: string } }> => {
        const b = await loadBuy(tx, id, null, true);
        if (!b) throw new ProtocolError('MEDIA_BUY_NOT_FOUND', `Media buy ${id} no longer exists`, { status: 404 });
        if (b.status === 'rejected') return { rejected: { code: 'POLICY_VIOLATION', reason: b.rejection_reason ?? 'rejected' } };
        if (b.status !== 'pending_review') return {};
        const booking = await deps.adServer.review(tx, id);
        if (booking.decision === 'pending_review') return { wait: booking.reviewAt };
        if (booking.decision === 'rejected') {
          const next: BuyRow = {
            ...b,
            status: requireTransition(b.status, 'rejected'),
            revision: b.revision + 1,
            rejection_reason: booking.reason,
            ended_at: now,
            updated_at: now,
          };
          await updateBuy(tx, id, {
            status: next.status,
            revision: next.revision,
            rejection_reason: booking.reason,
            ended_at: now,
            updated_at: now,
            due_at: dueAt(next, delayMs()),
          });
          await addHistory(tx, { mediaBuyId: id, revision: next.revision, at: now, actor: 'seller', action: 'rejected', summary: booking.reason });
          return { rejected: { code: booking.code ?? 'POLICY_VIOLATION', reason: booking.reason } };
        }
        const packages = (await loadPackages(tx, [id])).get(id)!;
        // The flight cannot start before the confirmation.
        const start = b.asap || b.start_time < now ? now : b.start_time;
        if (start.getTime() !== b.start_time.getTime()) await deps.adServer.amend(tx, id, { startTime: start });
        const next: BuyRow = {
          ...b,
          status: requireTransition(b.status, needsCreatives(packages) ? 'pending_creatives' : 'pending_start'),
          start_time: start,
          revision: b.revision + 1,
          confirmed_at: now,
          updated_at: now,
        };
        await updateBuy(tx, id, {
          status: next.status,
          start_time: start,
          revision: next.revision,
          confirmed_at: now,
          updated_at: now,
          due_at: dueAt(next, delayMs()),
        });
        await addHistory(tx, { mediaBuyId: id, revision: next.revision, at: now, actor: 'seller', action: 'confirmed', summary: 'Approved after review' });
        return {};
      });
      if (outcome.wait) return reschedule({ state, runAt: outcome.wait, status: 'working', message: 'Waiting for the seller review' });
      const reviewed = (await loadBuy(deps.db, id, null))!;
      if (reviewed.governance) {
        await reportGovernanceOutcome(
          deps,
          reviewed.owner,
          reviewed.governance,
          outcome.rejected ? { outcome: 'failed' } : { outcome: 'completed', seller_reference: id, committed_budget: reviewed.total_budget },
          reviewed.account_id,
        );
      }
      if (outcome.rejected)
        throw new ProtocolError(outcome.rejected.code, `The seller refused this media buy: ${outcome.rejected.reason}`, { recovery: 'terminal' });
      return renderBuy(reviewed, (await loadPackages(deps.db, [id])).get(id)!) as Json;
    },
  });
}
