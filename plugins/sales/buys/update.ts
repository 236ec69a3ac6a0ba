import * as v from 'valibot';
import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, keptWithin, type Json } from '../../../core/task.ts';
import type { SalesDeps } from '../deps.ts';
import { accountRef, timestamp, versionFields } from '../../../lib/adcp/request-fields.ts';
import { creativeAssignment, keptOverlay, money, packageRequest, pushConfig, reportingWebhook, targetingOverlay } from '../schemas.ts';
import { sealChannel } from '../channels.ts';
import { dueAt } from './due.ts';
import { reemitOpen } from '../impairments.ts';
import { assign, promotable, promoteIfReady } from './assignments.ts';
import { fitsFormats } from '../../../lib/adcp/format-ids.ts';
import { checkChannel } from './create.ts';
import { needsCreatives, planPackages, writePackages } from './packages.ts';
import { requireAction, requireTransition, VALID_ACTIONS } from './status.ts';
import { addHistory, loadBuy, loadPackages, TERMINAL, toPackage, updateBuyChanges, type BuyRow, type PackageRow } from './store.ts';
import { renderPackage } from './render.ts';
import { requireAdServer } from '../upstream.ts';
import { matchPackageLists, type ListMatch } from '../list-targeting.ts';
import { cents } from '../money.ts';
import { pipelined } from '../../../lib/pipelined.ts';

/**
 * Whether a number written to a numeric column of `places` decimals reads back as itself: its decimal
 * form (what the driver sends) has no more decimals than the column keeps, so nothing is rounded.
 */
function storesExactly(x: number | null, places: number): boolean {
  if (x === null) return true;
  const s = String(x);
  const dot = s.indexOf('.');
  return !s.includes('e') && (dot === -1 || s.length - dot - 1 <= places);
}

const packageUpdate = v.object({
  package_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128)),
  budget: v.optional(money),
  bid_price: v.optional(money),
  paused: v.optional(v.boolean()),
  canceled: v.optional(v.literal(true, 'must be true (a package cannot be un-canceled)')),
  cancellation_reason: v.optional(v.pipe(v.string(), v.maxLength(500))),
  creative_assignments: v.optional(v.pipe(v.array(creativeAssignment), v.maxLength(50))),
  // Replaces the package's list references (an empty object clears them).
  targeting_overlay: v.optional(targetingOverlay),
});

export const updateMediaBuyInput = v.object({
  ...versionFields,
  account: v.optional(accountRef),
  media_buy_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128)),
  revision: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'))),
  paused: v.optional(v.boolean()),
  canceled: v.optional(v.literal(true, 'must be true (a media buy cannot be un-canceled)')),
  cancellation_reason: v.optional(v.pipe(v.string(), v.maxLength(500))),
  start_time: v.optional(v.union([v.literal('asap'), timestamp], 'must be "asap" or an ISO 8601 timestamp')),
  end_time: v.optional(timestamp),
  packages: v.optional(v.pipe(v.array(packageUpdate, 'must be an array of package changes'), v.minLength(1, 'must not be empty'), v.maxLength(50))),
  new_packages: v.optional(v.pipe(v.array(packageRequest, 'must be an array of packages'), v.minLength(1, 'must not be empty'), v.maxLength(50))),
  push_notification_config: v.optional(pushConfig),
  reporting_webhook: v.optional(reportingWebhook),
});

export function updateMediaBuyTask(deps: SalesDeps) {
  const delayMs = () => deps.adServer.reporting.expectedDelayMinutes * 60_000;
  return defineTask({
    name: 'update_media_buy',
    description:
      'Change a media buy (the actions in its valid_actions): pause or resume, cancel, budgets, dates, package changes, new packages, creative assignments, and replace push_notification_config or reporting_webhook (used from the next fire). Send `revision` for optimistic concurrency.',
    protocol: 'media_buy',
    mutating: true,
    // Every write, and the answer for replays with the key, commit in the buy's transaction; nothing is claimed first.
    recordsKeyWithin: true,
    input: updateMediaBuyInput,
    async handler({ input, principal, clock, idempotency }) {
      const owner = principal.orgId;
      await requireAdServer(deps, principal.id, 'update_media_buy');
      const actor = principal.orgName;
      const changes = ['paused', 'canceled', 'start_time', 'end_time', 'packages', 'new_packages', 'push_notification_config', 'reporting_webhook'] as const;
      if (!changes.some((k) => input[k] !== undefined)) {
        throw new ProtocolError('INVALID_REQUEST', `Nothing to change: send one of ${changes.join(', ')}`, { field: 'media_buy_id' });
      }
      if (input.canceled && changes.some((k) => k !== 'canceled' && input[k] !== undefined)) {
        throw new ProtocolError('INVALID_REQUEST', 'canceled: a cancellation cannot be combined with other changes', { field: 'canceled' });
      }
      // media_buy_id names the buy among the caller's; a named account must exist, but it only
      // routes (buyers resend the account they last used, which may be another of theirs).
      // Resolved outside any transaction (settled before one opens: on a one-connection database a
      // pool read waits for the open transaction, which would wait for it); its refusal comes after the buy's.
      const account = input.account
        ? deps.accounts.resolve(deps.db, owner, input.account).then(
            () => null,
            (e: unknown) => e,
          )
        : null;
      /** The caller's buy, the named account and the channels, checked in this order. */
      const open = async (q: Queryable, lock: boolean) => {
        const buy = await loadBuy(q, input.media_buy_id, owner, lock);
        if (!buy || buy.status === 'pending_review') {
          throw new ProtocolError('MEDIA_BUY_NOT_FOUND', `No media buy ${input.media_buy_id.slice(0, 128)} for this caller`, {
            status: 404,
            field: 'media_buy_id',
          });
        }
        const refused = await account;
        if (refused) throw refused;
        checkChannel(deps, input.push_notification_config, 'push_notification_config');
        checkChannel(deps, input.reporting_webhook, 'reporting_webhook');
        return buy;
      };
      const now = clock.now();
      const retargets = (input.packages ?? []).some((u) => u.targeting_overlay);
      // New packages and replaced list references are checked against the catalog, creative agents
      // and list agents (network or pool) before the transaction; other changes read the buy once, locked.
      const current = input.new_packages || retargets ? await open(deps.db, false) : null;
      const before = current ? (await loadPackages(deps.db, [current.media_buy_id])).get(current.media_buy_id)! : [];
      const planned =
        current && input.new_packages
          ? await planPackages(deps, owner, current.account_id, input.new_packages, 'new_packages', current.media_buy_id, before.length, current.currency, now)
          : [];
      // Replaced list references resolve and match their package's product, before the transaction (it may fetch the lists).
      const retargeted = (input.packages ?? []).flatMap((u, i) =>
        u.targeting_overlay ? [{ u, i, pkg: before.find((p) => p.package_id === u.package_id) }] : [],
      );
      const matches = new Map<string, ListMatch>();
      if (retargeted.length) {
        const products = await deps.inventory.get(retargeted.flatMap((r) => (r.pkg ? [r.pkg.product_id] : [])));
        for (const { u, i, pkg } of retargeted) {
          const product = pkg && products.get(pkg.product_id);
          if (product) matches.set(pkg.package_id, await matchPackageLists(deps, owner, u.targeting_overlay, product, `packages[${i}].targeting_overlay`));
        }
      }
      const notes = [...[...matches.values()].flatMap((m) => (m.note ? [m.note] : [])), ...planned.flatMap((p) => (p.note ? [p.note] : []))];

      await account;
      return deps.db.transaction(async (tx) => {
        // Statements on one connection run in order: the packages' read, sent behind the lock
        // without waiting for it, still sees what the lock waited for.
        const locked = current ? loadBuy(tx, current.media_buy_id, owner, true).then((r) => r!) : open(tx, true);
        const loaded = loadPackages(tx, [input.media_buy_id]);
        // What was delivered bounds a new budget. When the first package change is a budget and nothing
        // before it touches the ad server, it is asked right behind the lock too.
        let spent: Promise<Map<string, number>> | null = null;
        const report = (id: string, start: Promise<Date> | Date) =>
          deps.adServer
            .report(
              tx,
              id,
              Promise.resolve(start).then((s) => [{ start: s, end: now }]),
              now,
            )
            .then(([rep]) => new Map(rep!.lines.map((l) => [l.packageId, l.spend])));
        const delivered = (b: BuyRow) => (spent ??= report(b.media_buy_id, b.start_time));
        const early =
          input.packages?.[0]?.budget !== undefined &&
          input.paused === undefined &&
          !input.canceled &&
          input.start_time === undefined &&
          input.end_time === undefined;
        if (early) {
          // Its read goes with the lock's (the window, from the buy's start, follows once the buy is read).
          spent = report(
            current?.media_buy_id ?? input.media_buy_id,
            locked.then((b) => b.start_time),
          );
          spent.catch(() => {});
        }
        const [b, byBuy] = await Promise.all([locked, loaded]);
        if (input.revision !== undefined && input.revision !== b.revision) {
          throw new ProtocolError('CONFLICT', `revision: the media buy is at revision ${b.revision}, not ${input.revision}; read it again and retry`, {
            field: 'revision',
            details: { current_revision: b.revision },
          });
        }
        if (TERMINAL.has(b.status)) {
          // Cancelling what has ended has its own code: the buyer's retry loop stops on it.
          throw new ProtocolError(input.canceled ? 'NOT_CANCELLABLE' : 'INVALID_STATE', `Media buy ${b.media_buy_id} is ${b.status}: it can no longer change`, {
            status: 409,
            field: 'media_buy_id',
            details: { current_status: b.status, valid_actions: [] },
          });
        }
        const packages = byBuy.get(b.media_buy_id)!;
        const byId = new Map(packages.map((p) => [p.package_id, p]));
        const next: BuyRow = { ...b, updated_at: now };
        const summary: string[] = [];
        const affected = new Set<string>();
        // The updated packages as stored (numeric columns rounded), to answer with.
        const written = new Map<string, PackageRow>();
        /** Package writes sent and not yet waited for (a failure still fails the call, with the buy's writes). */
        const deferred: Promise<unknown>[] = [];
        let assigned = false;

        if (input.canceled) {
          requireAction(b.status, 'cancel', 'canceled');
          await deps.adServer.setState(tx, b.media_buy_id, 'ended', now);
          Object.assign(next, { status: 'canceled', ended_at: now, canceled_by: 'buyer', cancellation_reason: input.cancellation_reason ?? null });
          summary.push('canceled');
        }
        if (input.paused === true && b.status !== 'paused') {
          requireAction(b.status, 'pause', 'paused');
          await deps.adServer.setState(
            tx,
            b.media_buy_id,
            'paused',
            now,
            packages.filter((p) => !p.canceled).map((p) => p.package_id),
          );
          next.status = 'paused';
          summary.push('paused');
        }
        if (input.paused === false && b.status !== 'active' && !b.started_at) {
          // Paused before it started: waiting again, for creatives or for the start (the lifecycle job starts it).
          requireAction(b.status, 'resume', 'paused');
          next.status = needsCreatives(packages) ? 'pending_creatives' : 'pending_start';
          summary.push('resumed before start');
        } else if (input.paused === false && b.status !== 'active') {
          requireAction(b.status, 'resume', 'paused');
          await deps.adServer.setState(
            tx,
            b.media_buy_id,
            'live',
            now,
            packages.filter((p) => !p.canceled && !p.paused).map((p) => p.package_id),
          );
          next.status = 'active';
          summary.push('resumed');
        }
        if (input.start_time !== undefined) {
          requireAction(b.status, 'update_dates', 'start_time');
          if (b.started_at)
            throw new ProtocolError('INVALID_STATE', 'start_time: the campaign has started; only end_time can change', { status: 409, field: 'start_time' });
          const start = input.start_time === 'asap' ? now : new Date(input.start_time);
          if (start.getTime() < now.getTime() - 5 * 60_000)
            throw new ProtocolError('INVALID_REQUEST', 'start_time: is in the past; send "asap" to start now', { field: 'start_time' });
          next.start_time = start;
          next.asap = input.start_time === 'asap';
          summary.push('start_time');
        }
        if (input.end_time !== undefined) {
          requireAction(b.status, 'update_dates', 'end_time');
          const end = new Date(input.end_time);
          if (end <= now || end <= next.start_time)
            throw new ProtocolError('INVALID_REQUEST', 'end_time: must be in the future and after start_time', { field: 'end_time' });
          next.end_time = end;
          summary.push('end_time');
        }
        if (input.start_time !== undefined || input.end_time !== undefined)
          await deps.adServer.amend(tx, b.media_buy_id, { startTime: next.start_time, endTime: next.end_time });

        for (const [i, u] of (input.packages ?? []).entries()) {
          const at = `packages[${i}]`;
          const pkg = byId.get(u.package_id);
          if (!pkg)
            throw new ProtocolError('PACKAGE_NOT_FOUND', `No package ${u.package_id.slice(0, 128)} in media buy ${b.media_buy_id}`, {
              status: 404,
              field: `${at}.package_id`,
            });
          if (pkg.canceled) throw new ProtocolError('INVALID_STATE', `Package ${pkg.package_id} is canceled`, { status: 409, field: `${at}.package_id` });
          const changed: Partial<PackageRow> = {};
          if (u.budget !== undefined) {
            requireAction(b.status, 'update_budget', `${at}.budget`);
            const floor = Math.max(deps.options.minPackageBudget, (await delivered(b)).get(pkg.package_id) ?? 0);
            if (u.budget < floor) {
              throw new ProtocolError('BUDGET_TOO_LOW', `${at}.budget: ${u.budget} is below ${floor} ${pkg.currency} (the minimum or what was already spent)`, {
                field: `${at}.budget`,
                details: { minimum_budget: floor },
              });
            }
            changed.budget = u.budget;
          }
          if (u.bid_price !== undefined) {
            requireAction(b.status, 'update_packages', `${at}.bid_price`);
            changed.bid_price = u.bid_price;
          }
          if (u.paused !== undefined && u.paused !== pkg.paused) {
            requireAction(b.status, 'update_packages', `${at}.paused`);
            changed.paused = u.paused;
            if (next.status === 'active') await deps.adServer.setState(tx, b.media_buy_id, u.paused ? 'paused' : 'live', now, [pkg.package_id]);
          }
          if (u.canceled) {
            requireAction(b.status, 'update_packages', `${at}.canceled`);
            changed.canceled = true;
            await deps.adServer.setState(tx, b.media_buy_id, 'ended', now, [pkg.package_id]);
          }
          for (const [j, a] of (u.creative_assignments ?? []).entries()) {
            requireAction(b.status, 'sync_creatives', `${at}.creative_assignments`);
            const key = (await deps.creatives.formatKeys(tx, b.account_id, [a.creative_id])).get(a.creative_id);
            if (!key)
              throw new ProtocolError('CREATIVE_NOT_FOUND', `Creative ${a.creative_id} is not in the account library`, {
                status: 404,
                field: `${at}.creative_assignments[${j}].creative_id`,
              });
            if (!fitsFormats(pkg.format_ids, key))
              throw new ProtocolError('FORMAT_NOT_SUPPORTED', `Creative ${a.creative_id} does not fit the formats of package ${pkg.package_id}`, {
                field: `${at}.creative_assignments[${j}].creative_id`,
              });
            await assign(tx, b.account_id, a.creative_id, pkg.package_id, a.weight, now);
            assigned = true;
          }
          if (u.targeting_overlay !== undefined) {
            requireAction(b.status, 'update_packages', `${at}.targeting_overlay`);
            changed.targeting_overlay = keptOverlay(u.targeting_overlay);
          }
          Object.assign(pkg, changed);
          const match = matches.get(pkg.package_id);
          // The row as stored is the row as changed here (no rounding, no jsonb reordering): nothing to read back.
          const exact = u.targeting_overlay === undefined && storesExactly(pkg.budget, 2) && storesExactly(pkg.bid_price, 4);
          // The package's row and its ad server line are written together (one round trip).
          const write = Promise.all([
            tx.query(sql`UPDATE sales_packages SET budget = ${pkg.budget}::numeric, bid_price = ${pkg.bid_price}::numeric, paused = ${pkg.paused}::boolean,
            canceled = ${pkg.canceled}::boolean, targeting_overlay = ${pkg.targeting_overlay ?? null}::jsonb WHERE package_id = ${pkg.package_id}::text
            ${exact ? sql.empty : sql`RETURNING *`}`),
            (changed.budget !== undefined || changed.bid_price !== undefined || match) &&
              deps.adServer.amend(tx, b.media_buy_id, {
                lines: [
                  {
                    packageId: pkg.package_id,
                    productId: pkg.product_id,
                    budget: pkg.budget,
                    pricingModel: pkg.pricing_model,
                    rate: pkg.bid_price ?? pkg.rate,
                    currency: pkg.currency,
                    ctr: 0,
                    ...(match ? { inventoryShare: match.share } : {}),
                  },
                ],
              }),
          ]);
          if (exact) {
            // Not waited for: it travels with the buy's writes below (one round trip less while the buy is locked).
            write.catch(() => {});
            deferred.push(write);
            written.set(pkg.package_id, { ...pkg });
          } else {
            const [[stored]] = await write;
            written.set(pkg.package_id, toPackage({ ...stored, creatives: pkg.creatives }));
          }
          affected.add(pkg.package_id);
          summary.push(`package ${pkg.package_id}`);
        }
        if (planned.length) {
          requireAction(b.status, 'add_packages', 'new_packages');
          await writePackages(deps, tx, owner, b.account_id, planned, now);
          await deps.adServer.amend(tx, b.media_buy_id, { lines: planned.map((p) => p.line) });
          const live = planned.filter((p) => !p.row.paused).map((p) => p.row.package_id);
          if (next.status === 'active' && live.length) await deps.adServer.setState(tx, b.media_buy_id, 'live', now, live);
          for (const p of planned) affected.add(p.row.package_id);
          summary.push(`${planned.length} new package(s)`);
          // A package without creatives takes a buy that has not started back to waiting for them.
          if (next.status === 'pending_start' && needsCreatives(planned.map((p) => p.row))) next.status = 'pending_creatives';
        }
        if (input.push_notification_config) {
          next.push_config = await sealChannel(deps.box, { ...input.push_notification_config, registered_by: 'update_media_buy' });
          // Open impairments are fired again at the new address (same notification_id, new idempotency key).
          if (await reemitOpen(tx, b.media_buy_id)) next.impairments_due_at = now;
          summary.push('push_notification_config');
        }
        if (input.reporting_webhook) {
          if (!deps.adServer.reporting.granularities.includes(input.reporting_webhook.reporting_frequency)) {
            throw new ProtocolError(
              'UNSUPPORTED_GRANULARITY',
              `reporting_webhook.reporting_frequency: ${input.reporting_webhook.reporting_frequency} reports are not available`,
              { field: 'reporting_webhook.reporting_frequency' },
            );
          }
          next.reporting_webhook = await sealChannel(deps.box, { ...input.reporting_webhook, registered_by: 'update_media_buy' });
          summary.push('reporting_webhook');
        }
        requireTransition(b.status, next.status);
        next.total_budget = cents([...packages.filter((p) => !p.canceled), ...planned.map((p) => p.row)].reduce((s, p) => s + p.budget, 0));
        next.revision = b.revision + 1;
        // New packages and assignments change what is stored beyond `next` and `written`: read back.
        const fresh = planned.length > 0 || assigned;
        const render = (after: BuyRow, rows: PackageRow[]): Json => {
          const body: Json = {
            media_buy_id: after.media_buy_id,
            media_buy_status: after.status,
            revision: after.revision,
            currency: after.currency,
            total_budget: after.total_budget,
            implementation_date: now.toISOString(),
            affected_packages: rows.filter((p) => affected.has(p.package_id)).map(renderPackage),
            valid_actions: [...VALID_ACTIONS[after.status]],
            sandbox: after.sandbox,
          };
          if (notes.length) body.message = notes.join(' ');
          return body;
        };
        // The buy's row and its history entry travel together (one round trip).
        const writes = [
          ...deferred,
          updateBuyChanges(tx, b.media_buy_id, {
            status: next.status,
            revision: next.revision,
            total_budget: next.total_budget,
            start_time: next.start_time,
            end_time: next.end_time,
            ended_at: next.ended_at,
            canceled_by: next.canceled_by,
            cancellation_reason: next.cancellation_reason,
            push_config: next.push_config,
            reporting_webhook: next.reporting_webhook,
            impairments_due_at: next.impairments_due_at,
            updated_at: now,
            due_at: dueAt(next, delayMs()),
          }),
          addHistory(tx, {
            mediaBuyId: b.media_buy_id,
            revision: next.revision,
            at: now,
            actor,
            action: input.canceled ? 'canceled' : 'updated',
            summary: summary.join(', '),
          }),
        ];
        // Nothing read back and no promotion: the answer is known before the last writes, so they are not
        // waited for (their failure is the transaction's) and the answer for replays goes with them, COMMIT right behind.
        if (!fresh && !promotable(next, packages)) {
          for (const w of writes) w.catch(() => {});
          return keptWithin(
            idempotency,
            tx,
            render(
              next,
              packages.map((p) => written.get(p.package_id) ?? p),
            ),
          );
        }
        await pipelined(writes);
        const promoted = await promoteIfReady(tx, b.media_buy_id, actor, now, fresh ? undefined : { buy: next, packages });
        const after = promoted ?? next;
        const rows = fresh ? (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)! : packages.map((p) => written.get(p.package_id) ?? p);
        return keptWithin(idempotency, tx, render(after, rows));
      });
    },
  });
}
