import * as v from 'valibot';
import { domain, versionFields } from '../../lib/adcp/request-fields.ts';

export { domain, versionFields };
import { RIGHT_TYPES, RIGHT_USES } from './catalog.ts';

export const nonEmpty = (max: number) =>
  v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
export const entityId = v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
export const country = v.pipe(v.string('must be a string'), v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code (US)'));
export const countries = v.pipe(v.array(country, 'must be an array'), v.maxLength(250, 'accepts at most 250 countries'));
export const rightUses = v.pipe(
  v.array(v.picklist(RIGHT_USES, `must be one of ${RIGHT_USES.join(', ')}`), 'must be an array'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(RIGHT_USES.length, `accepts at most ${RIGHT_USES.length} uses`),
);
export const rightType = v.picklist(RIGHT_TYPES, `must be one of ${RIGHT_TYPES.join(', ')}`);
export const date = v.pipe(v.string('must be a string'), v.isoDate('must be a date (YYYY-MM-DD)'));

/** core/brand-ref.json; only the domain is kept. */
export const brandRef = v.looseObject({ domain, brand_id: v.optional(nonEmpty(128)) }, 'must be an object {domain}');

/** `{account_id}` or `{brand: {domain}, operator, sandbox?}` (core/account-ref.json). */
export const accountRef = v.union(
  [v.strictObject({ account_id: nonEmpty(128) }), v.strictObject({ brand: brandRef, operator: domain, sandbox: v.optional(v.boolean()) })],
  'must be {account_id} or {brand: {domain}, operator}',
);
export type AccountRef = v.InferOutput<typeof accountRef>;

/** core/push-notification-config.json: where revocations are sent and how the receiver authenticates them. */
export const pushConfig = v.looseObject(
  {
    url: v.pipe(v.string('must be a string'), v.url('must be an absolute URL'), v.regex(/^https?:\/\//, 'must be an http(s) URL'), v.maxLength(2048)),
    operation_id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,255}$/, 'must match ^[A-Za-z0-9_.:-]{1,255}$'))),
    token: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'), v.maxLength(4096))),
    authentication: v.optional(
      v.strictObject({
        schemes: v.pipe(v.array(v.picklist(['Bearer', 'HMAC-SHA256'], 'must be Bearer or HMAC-SHA256')), v.minLength(1), v.maxLength(1)),
        credentials: v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'), v.maxLength(4096)),
      }),
    ),
  },
  'must be an object {url}',
);
export type PushConfig = v.InferOutput<typeof pushConfig>;
