import * as v from 'valibot';
import { DOMAIN_PATTERN } from './patterns.ts';

/** Request fields the AdCP tasks share (3.x shapes, accepted from 3.0 and 3.1 clients): envelope members, ids, dates, account and brand references. */

export const domain = v.pipe(
  v.string('must be a string'),
  v.maxLength(253, 'must be at most 253 characters'),
  v.regex(DOMAIN_PATTERN, 'must be a lowercase domain name'),
);
export const id = (max = 255) =>
  v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
export const timestamp = v.pipe(v.string('must be an ISO 8601 timestamp'), v.isoTimestamp('must be an ISO 8601 timestamp with a time zone'));
export const date = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD'), v.isoDate('must be a valid date'));

export const versionFields = {
  adcp_version: v.optional(v.pipe(v.string(), v.regex(/^\d+\.\d+(-[a-zA-Z0-9.-]+)?$/, 'must look like 3.1'))),
  adcp_major_version: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(3, 'only major version 3 is supported'), v.maxValue(3, 'only major version 3 is supported')),
  ),
  ext: v.optional(v.record(v.string(), v.unknown())),
};

/** A caller pinned release 3.1+ (AdCP version negotiation): 3.1-only response fields may be sent. */
export const pins31 = (input: { adcp_version?: string }) => {
  const m = input.adcp_version ? /^(\d+)\.(\d+)/.exec(input.adcp_version) : null;
  return !!m && (Number(m[1]) > 3 || Number(m[2]) >= 1);
};

export const brandRef = v.object({ domain, brand_id: v.optional(id(128)) }, 'must be an object {domain}');

/** `{account_id}` or `{brand: {domain}, operator}` (core/account-ref.json). */
export const accountRef = v.union(
  [v.strictObject({ account_id: id(128) }), v.strictObject({ brand: brandRef, operator: domain, sandbox: v.optional(v.boolean()) })],
  'must be {account_id} or {brand: {domain}, operator}',
);
export type AccountRef = v.InferOutput<typeof accountRef>;

export const pagination = v.optional(
  v.object({
    max_results: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(100, 'must be at most 100'))),
    cursor: v.optional(v.pipe(v.string(), v.maxLength(512))),
  }),
);

/** A creative as a buyer uploads it (sync_creatives, or inline in a package). */
const creativeAsset = v.object({
  creative_id: v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$')),
  name: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(255)),
  // Checked by hand so that a bare string answers INVALID_FORMAT_ID rather than INVALID_REQUEST.
  format_id: v.unknown(),
  assets: v.pipe(
    v.record(v.string(), v.record(v.string(), v.unknown()), 'must be an object of asset objects'),
    v.check((a) => Object.keys(a).length <= 50, 'accepts at most 50 assets'),
  ),
  tags: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(50))),
  weight: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
});
export const creative = creativeAsset;
export type CreativeInput = v.InferOutput<typeof creativeAsset>;
