import * as v from 'valibot';
import { defineTask, type Json } from '../../../core/task.ts';
import type { WebhookActivityRecord } from '../../../core/ports/webhook-activity.ts';
import type { SalesDeps } from '../deps.ts';
import { accountRef, pagination, pins31, versionFields } from '../../../lib/adcp/request-fields.ts';
import type { SalesAccount } from '../../../core/ports/sales-accounts.ts';
import { decodeOffset, fingerprint, pageInfo } from '../../../lib/adcp/query-cursor.ts';
import { loadHistory } from './store.ts';
import { renderListedBuy } from './render.ts';
import type { BuyListings, BuysFilter } from './listing.ts';

const STATUSES = ['pending_creatives', 'pending_start', 'active', 'paused', 'completed', 'rejected', 'canceled'] as const;
const status = v.picklist(STATUSES, `must be one of ${STATUSES.join(', ')}`);

/** webhook-activity-record.json. */
function renderActivity(r: WebhookActivityRecord): Json {
  const out: Json = {
    idempotency_key: r.idempotencyKey,
    fired_at: r.firedAt.toISOString(),
    completed_at: r.completedAt?.toISOString() ?? null,
    notification_type: r.notificationType,
    attempt: r.attempt,
    status: r.status,
    url: r.url,
    http_status_code: r.httpStatusCode,
    payload_size_bytes: r.payloadSizeBytes,
    error_message: r.errorMessage,
  };
  if (r.sequenceNumber !== undefined) out.sequence_number = r.sequenceNumber;
  return out;
}

export function getMediaBuysTask(deps: SalesDeps, listings: BuyListings) {
  return defineTask({
    name: 'get_media_buys',
    description:
      "The caller's media buys (by ids, status or account) with packages, valid actions, health and open impairments; optionally their recent webhook fires (include_webhook_activity), revision history and delivery snapshots. Cursor pagination.",
    protocol: 'media_buy',
    input: v.object({
      ...versionFields,
      account: v.optional(accountRef),
      media_buy_ids: v.optional(
        v.pipe(
          v.array(v.pipe(v.string(), v.maxLength(128)), 'must be an array of ids'),
          v.minLength(1, 'must not be empty'),
          v.maxLength(100, 'accepts at most 100 ids'),
        ),
      ),
      status_filter: v.optional(v.union([status, v.pipe(v.array(status), v.minLength(1))], `must be a status or an array of ${STATUSES.join(', ')}`)),
      include_snapshot: v.optional(v.boolean()),
      include_history: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0), v.maxValue(100, 'must be at most 100'))),
      include_webhook_activity: v.optional(v.boolean()),
      webhook_activity_limit: v.optional(
        v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(100, 'must be at most 100')),
      ),
      pagination,
    }),
    async handler({ input, principal, clock }) {
      const owner = principal.orgId;
      let account: SalesAccount | undefined;
      if (input.account) account = await deps.accounts.resolve(deps.db, owner, input.account);
      // 3.0 has no unconfirmed buys (confirmed_at is a timestamp there): rejected-before-confirmation ones are for 3.1 readers.
      const v31 = pins31(input) || input.include_webhook_activity !== undefined;
      const statuses = input.status_filter === undefined ? undefined : Array.isArray(input.status_filter) ? input.status_filter : [input.status_filter];
      const filters: BuysFilter[] = [];
      if (!v31) filters.push('confirmed');
      if (account) filters.push('account');
      if (input.media_buy_ids) filters.push('ids');
      if (statuses) filters.push('statuses');
      const limit = input.pagination?.max_results ?? 50;
      // The query's fingerprint (a hash) only when a cursor is read or written.
      let print: string | undefined;
      const printOf = () => (print ??= fingerprint([owner, input.account, input.media_buy_ids, statuses, v31]));
      const cursor = input.pagination?.cursor;
      const offset = cursor === undefined ? 0 : decodeOffset(cursor, printOf());
      const page = await listings.read('listed', filters, {
        owner,
        account_id: account?.account_id ?? null,
        ids: input.media_buy_ids ?? null,
        statuses: statuses ?? null,
        limit,
        offset,
      });
      const buys = page.buys.map((l) => l.buy);
      const ids = buys.map((b) => b.media_buy_id);
      const accountIds = [...new Set(buys.map((b) => b.account_id))];
      const [history, accounts] = await Promise.all([
        input.include_history ? loadHistory(deps.db, ids, input.include_history) : Promise.resolve(null),
        // Filtered to one account: it is the one already resolved, not read again.
        account && accountIds.every((id) => id === account!.account_id) ? [account] : deps.accounts.byIds(deps.db, accountIds),
      ]);
      const accountOf = new Map(accounts.map((a) => [a.account_id, { account_id: a.account_id, name: a.name, status: a.status }]));
      const activity = input.include_webhook_activity && deps.activity ? await deps.activity.recent(owner, ids, input.webhook_activity_limit ?? 20) : null;
      const now = clock.now();
      const media_buys: Json[] = [];
      for (const { buy: b, packages, impairments, feedback } of page.buys) {
        const out = renderListedBuy(b, packages, accountOf.get(b.account_id));
        out.health = impairments.length ? 'impaired' : 'ok';
        out.impairments = impairments;
        // Extension member (both versions allow it): what the buyer reported with provide_performance_feedback.
        if (feedback.length) out.performance_feedback = feedback;
        if (history) out.history = history.get(b.media_buy_id)!;
        // Three states: omitted (not asked, or no push channel), [] (nothing fired), records.
        if (activity && b.pushes) out.webhook_activity = activity.get(b.media_buy_id)!.map(renderActivity);
        if (input.include_snapshot) {
          const [rep] = await deps.adServer.report(deps.db, b.media_buy_id, [{ start: b.start_time, end: now }], now);
          const lines = new Map(rep!.lines.map((l) => [l.packageId, l]));
          const staleness = deps.adServer.reporting.expectedDelayMinutes * 60;
          for (const p of out.packages as Json[]) {
            const l = lines.get(p.package_id as string) ?? { impressions: 0, spend: 0, clicks: 0 };
            p.snapshot = { as_of: now.toISOString(), staleness_seconds: staleness, impressions: l.impressions, spend: l.spend, clicks: l.clicks };
          }
        }
        media_buys.push(out);
      }
      const body: Json = { media_buys, pagination: pageInfo(offset, buys.length, page.total, printOf) };
      if (deps.options.sandbox) body.sandbox = true;
      return body;
    },
  });
}
