import * as v from 'valibot';
import { sql } from '../../../core/sql.ts';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import type { CreativeStorePort } from '../../../core/ports/creative-store.ts';
import type { CreativeContext } from '../context.ts';
import { accountOf, findVariants, leafAccount } from '../build-variants.ts';

const text = (max: number) => v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max));
const record = v.looseObject({
  account: v.looseObject({}, 'is required: an account reference'),
  creative_id: v.optional(text(128)),
  // AdCP 3.1: the produced leaf a creative_id other than its own was promoted from.
  build_variant_id: v.optional(text(128)),
  media_buy_id: v.optional(text(128)),
  pricing_option_id: v.optional(text(128)),
  impressions: v.optional(v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(0, 'must be at least 0'))),
  vendor_cost: v.pipe(v.number('is required: a number'), v.minValue(0, 'must be at least 0'), v.maxValue(1e12)),
  currency: v.pipe(v.string('is required'), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')),
});
type UsageRecord = v.InferOutput<typeof record>;

/** A record's error in the response's `errors` (core/error.json), naming the field. */
class RecordError extends Error {
  constructor(
    readonly code: string,
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/**
 * report_usage (account/report-usage): a buyer reports how the creatives this agent generated or
 * served were used. A record names a creative this agent built for the caller (creative_id = the
 * build's build_variant_id, or creative_id with the build_variant_id it was promoted from), or one of
 * the caller's library (in the record's account). Others are answered in `errors` naming the record,
 * and nothing is accepted for them.
 */
export function reportUsageTask(ctx: CreativeContext, store: () => CreativeStorePort | undefined) {
  /** The account a record is kept under, and the leaf it names (if a generated creative). */
  async function check(
    owner: string,
    r: UsageRecord,
    field: string,
    leaves: Awaited<ReturnType<typeof findVariants>>,
  ): Promise<{ account_id: string; build_variant_id: string | null }> {
    const library = store();
    if (!r.creative_id) throw new RecordError('INVALID_REQUEST', `${field}.creative_id`, 'is required for a creative agent');
    const account = accountOf(r.account);
    if (!account) throw new RecordError('INVALID_REQUEST', `${field}.account`, 'must be {account_id} or {brand: {domain}, operator}');
    const leafId = r.build_variant_id ?? r.creative_id;
    const leaf = leaves.get(leafId);
    if (leaf) {
      const accountId = await leafAccount(library, owner, leaf.account, account, `${field}.account`);
      if (accountId !== null) return { account_id: accountId, build_variant_id: leafId };
      // Promoted into the library (creative_id = build_variant_id) under another account: the library's account stands.
      if (r.build_variant_id || !library)
        throw new RecordError(
          'CREATIVE_NOT_FOUND',
          `${field}.${r.build_variant_id ? 'build_variant_id' : 'creative_id'}`,
          `${leafId} was not built for this account`,
        );
    } else if (r.build_variant_id)
      throw new RecordError('CREATIVE_NOT_FOUND', `${field}.build_variant_id`, `no creative ${leafId} built by this agent for you`);
    if (!library) throw new RecordError('CREATIVE_NOT_FOUND', `${field}.creative_id`, `no creative ${r.creative_id} built by this agent for you`);
    // A sandbox fixture account id (null) names no account of the caller: the creative's own stands.
    const accountId = await library.accountId(owner, account, `${field}.account`);
    const [found, other] = await library.find(owner, [r.creative_id], accountId ?? undefined);
    if (other) throw new RecordError('ACCOUNT_AMBIGUOUS', `${field}.creative_id`, 'is in several of your accounts; name its account');
    if (!found) {
      const message = leaf
        ? `${leafId} was not built for this account, nor is it in its library`
        : `no creative ${r.creative_id} built by this agent or in this account's library`;
      throw new RecordError('CREATIVE_NOT_FOUND', `${field}.creative_id`, message);
    }
    return { account_id: found.account_id, build_variant_id: leaf ? leafId : null };
  }

  return defineTask({
    name: 'report_usage',
    description:
      "Report usage of creatives this agent built or served (per record: account, creative_id (a build's build_variant_id, or a library creative), build_variant_id when the creative_id was promoted from one, impressions, vendor_cost, currency); records of creatives not yours are refused in errors.",
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
      const owner = principal.orgId;
      const errors: Json[] = [];
      const kept: Array<{ account_id: string; build_variant_id: string | null; r: UsageRecord }> = [];
      // The build leaves every record may name, in one read.
      const leafIds = input.usage.flatMap((r) => [r.build_variant_id ?? r.creative_id].filter((id): id is string => id !== undefined));
      const leaves = await findVariants(ctx.db, owner, [...new Set(leafIds)]);
      for (const [i, r] of input.usage.entries()) {
        const field = `usage[${i}]`;
        try {
          kept.push({ ...(await check(owner, r, field, leaves)), r });
        } catch (error) {
          if (error instanceof RecordError) errors.push({ code: error.code, message: error.message, field: error.field });
          else if (error instanceof ProtocolError) errors.push({ code: error.code, message: error.message, field: `${field}.account` });
          else throw error;
        }
      }
      if (kept.length) {
        const now = clock.now();
        const rows = kept.map(({ account_id, build_variant_id, r }) => ({
          account_id,
          creative_id: r.creative_id,
          build_variant_id,
          media_buy_id: r.media_buy_id ?? null,
          pricing_option_id: r.pricing_option_id ?? null,
          impressions: r.impressions ?? null,
          vendor_cost: r.vendor_cost,
          currency: r.currency,
        }));
        await ctx.db.query(sql`
          INSERT INTO creative_usage_reports (owner, account_id, creative_id, build_variant_id, media_buy_id, pricing_option_id, impressions, vendor_cost, currency,
            period_start, period_end, created_at)
          SELECT ${owner}::text, r.account_id, r.creative_id, r.build_variant_id, r.media_buy_id, r.pricing_option_id, r.impressions, r.vendor_cost, r.currency,
            ${input.reporting_period.start}::timestamptz, ${input.reporting_period.end}::timestamptz, ${now}::timestamptz
          FROM jsonb_to_recordset(${rows}::jsonb) AS r(account_id text, creative_id text, build_variant_id text, media_buy_id text, pricing_option_id text,
            impressions bigint, vendor_cost numeric, currency text)`);
      }
      const body: Json = { accepted: kept.length };
      if (errors.length) body.errors = errors;
      return body;
    },
  });
}
