import * as v from 'valibot';
import { sql } from '../../../core/sql.ts';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import type { CreativeStorePort } from '../../../core/ports/creative-store.ts';
import type { CreativeContext } from '../context.ts';

const text = (max: number) => v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max));
const record = v.looseObject({
  account: v.looseObject({}, 'is required: an account reference'),
  creative_id: v.optional(text(128)),
  media_buy_id: v.optional(text(128)),
  pricing_option_id: v.optional(text(128)),
  impressions: v.optional(v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(0, 'must be at least 0'))),
  vendor_cost: v.pipe(v.number('is required: a number'), v.minValue(0, 'must be at least 0'), v.maxValue(1e12)),
  currency: v.pipe(v.string('is required'), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')),
});

/**
 * report_usage (account/report-usage): a buyer reports how the creatives this agent generated or
 * served were used. Records naming a creative of the caller's library (in the record's account) are
 * kept; others are answered in `errors` naming the record, and nothing is accepted for them.
 */
export function reportUsageTask(ctx: CreativeContext, store: () => CreativeStorePort | undefined) {
  return defineTask({
    name: 'report_usage',
    description:
      'Report usage of creatives this agent built or served (per record: account, creative_id, impressions, vendor_cost, currency); records of creatives not in your library are refused in errors.',
    protocol: 'creative',
    mutating: true,
    input: v.object({
      reporting_period: v.pipe(
        v.object({
          start: v.pipe(v.string('is required'), v.isoTimestamp('must be an ISO 8601 date-time')),
          end: v.pipe(v.string('is required'), v.isoTimestamp('must be an ISO 8601 date-time')),
        }),
        v.forward(
          v.check((p) => Date.parse(p.start) <= Date.parse(p.end), 'must not end before it starts'),
          ['end'],
        ),
      ),
      usage: v.pipe(
        v.array(record, 'must be an array of usage records'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(1000, 'accepts at most 1000 records'),
      ),
    }),
    async handler({ input, principal, clock }) {
      const library = store();
      if (!library) throw new ProtocolError('UNSUPPORTED_FEATURE', 'This creative agent has no creative library to report usage against', { field: 'usage' });
      const owner = principal.orgId;
      const errors: Json[] = [];
      const kept: Array<{ account_id: string; r: v.InferOutput<typeof record> }> = [];
      for (const [i, r] of input.usage.entries()) {
        const field = `usage[${i}]`;
        if (!r.creative_id) {
          errors.push({ code: 'INVALID_REQUEST', message: `${field}.creative_id: is required for a creative agent`, field: `${field}.creative_id` });
          continue;
        }
        let accountId: string | null;
        try {
          accountId = await library.accountId(owner, r.account, `${field}.account`);
        } catch (error) {
          if (!(error instanceof ProtocolError)) throw error;
          errors.push({ code: error.code, message: error.message, field: `${field}.account` });
          continue;
        }
        // A sandbox fixture account id (null) names no account of the caller: the creative's own stands.
        const [found, other] = await library.find(owner, [r.creative_id], accountId ?? undefined);
        if (!found || other) {
          const message = other ? `is in several of your accounts; name its account` : `no creative ${r.creative_id} in this account's library`;
          errors.push({ code: other ? 'ACCOUNT_AMBIGUOUS' : 'CREATIVE_NOT_FOUND', message: `${field}.creative_id: ${message}`, field: `${field}.creative_id` });
          continue;
        }
        kept.push({ account_id: found.account_id, r });
      }
      if (kept.length) {
        const now = clock.now();
        const rows = kept.map(({ account_id, r }) => ({
          account_id,
          creative_id: r.creative_id,
          media_buy_id: r.media_buy_id ?? null,
          pricing_option_id: r.pricing_option_id ?? null,
          impressions: r.impressions ?? null,
          vendor_cost: r.vendor_cost,
          currency: r.currency,
        }));
        await ctx.db.query(sql`
          INSERT INTO creative_usage_reports (owner, account_id, creative_id, media_buy_id, pricing_option_id, impressions, vendor_cost, currency, period_start, period_end, created_at)
          SELECT ${owner}::text, r.account_id, r.creative_id, r.media_buy_id, r.pricing_option_id, r.impressions, r.vendor_cost, r.currency,
            ${input.reporting_period.start}::timestamptz, ${input.reporting_period.end}::timestamptz, ${now}::timestamptz
          FROM jsonb_to_recordset(${rows}::jsonb) AS r(account_id text, creative_id text, media_buy_id text, pricing_option_id text, impressions bigint,
            vendor_cost numeric, currency text)`);
      }
      const body: Json = { accepted: kept.length };
      if (errors.length) body.errors = errors;
      return body;
    },
  });
}
