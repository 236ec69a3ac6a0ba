import * as v from 'valibot';
import { measurementTerms } from './measurement-terms.ts';
import { creative } from '../../lib/adcp/request-fields.ts';

/** Request pieces shared by the sales tasks (AdCP 3.x shapes, accepted from 3.0 and 3.1 clients). */

export const safeId = v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
export const money = v.pipe(v.number('must be a number'), v.finite('must be finite'), v.minValue(0, 'must be at least 0'), v.maxValue(1e12, 'is too large'));
const httpUrl = v.pipe(v.string('must be a string'), v.maxLength(2048), v.url('must be an absolute URL'), v.regex(/^https?:\/\//i, 'must be an http(s) URL'));

const authentication = v.strictObject({
  schemes: v.pipe(v.array(v.picklist(['Bearer', 'HMAC-SHA256'], 'must be Bearer or HMAC-SHA256')), v.length(1, 'must hold exactly one scheme')),
  credentials: v.pipe(v.string('is required'), v.minLength(32, 'must be at least 32 characters'), v.maxLength(4096)),
});

/** A media buy's persistent push channel (lifecycle and impairment events). */
export const pushConfig = v.object({
  url: httpUrl,
  operation_id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,255}$/, 'must match ^[A-Za-z0-9_.:-]{1,255}$'))),
  token: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'), v.maxLength(4096))),
  authentication: v.optional(authentication),
});

export const REPORTING_FREQUENCIES = ['hourly', 'daily', 'monthly'] as const;
export const METRICS = ['impressions', 'spend', 'clicks', 'ctr'] as const;

/** `reporting_webhook`: delivery reports at a cadence. Without `authentication` they are RFC 9421 signed. */
export const reportingWebhook = v.object({
  url: httpUrl,
  // Not in the schema: the correlation id echoed in report envelopes (default: the push config's, else the media buy id).
  operation_id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,255}$/, 'must match ^[A-Za-z0-9_.:-]{1,255}$'))),
  token: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'), v.maxLength(4096))),
  authentication: v.optional(authentication),
  reporting_frequency: v.picklist(REPORTING_FREQUENCIES, 'must be hourly, daily or monthly'),
  requested_metrics: v.optional(v.pipe(v.array(v.string()), v.maxLength(40))),
});

export const creativeAssignment = v.object({
  creative_id: v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$')),
  weight: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
});

/** One package of create_media_buy (media-buy/package-request.json). */
/** A reference to a list another agent hosts (core/property-list-ref.json, collection-list-ref.json). */
export const listRef = v.object({
  agent_url: v.pipe(v.string('is required'), v.url('must be an absolute URL'), v.regex(/^https?:\/\//i, 'must be an http(s) URL'), v.maxLength(2048)),
  list_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(256)),
  auth_token: v.optional(v.pipe(v.string(), v.maxLength(4096))),
});

/**
 * The list references of a package's targeting overlay, checked against the package's product
 * (list-targeting.ts), kept with the package and shown back. Other overlay members are not honored
 * by this seller and are dropped.
 */
export const targetingOverlay = v.object({
  property_list: v.optional(listRef),
  collection_list: v.optional(listRef),
  collection_list_exclude: v.optional(listRef),
});
export type TargetingOverlay = v.InferOutput<typeof targetingOverlay>;

/** What is stored and shown of an overlay: the references without their access tokens (null when none). */
export function keptOverlay(o: TargetingOverlay | undefined): Record<string, { agent_url: string; list_id: string }> | null {
  if (!o) return null;
  const out: Record<string, { agent_url: string; list_id: string }> = {};
  for (const [k, ref] of Object.entries(o)) if (ref) out[k] = { agent_url: ref.agent_url, list_id: ref.list_id };
  return Object.keys(out).length ? out : null;
}

export const packageRequest = v.object({
  product_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128)),
  pricing_option_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128)),
  budget: v.pipe(v.number('is required (a number)'), v.finite('must be finite'), v.minValue(0, 'must be at least 0'), v.maxValue(1e12, 'is too large')),
  bid_price: v.optional(money),
  format_ids: v.optional(v.pipe(v.array(v.unknown()), v.minLength(1, 'must not be empty'), v.maxLength(50))),
  paused: v.optional(v.boolean()),
  creatives: v.optional(v.pipe(v.array(creative), v.minLength(1), v.maxLength(50))),
  creative_assignments: v.optional(v.pipe(v.array(creativeAssignment), v.minLength(1), v.maxLength(50))),
  measurement_terms: v.optional(measurementTerms),
  targeting_overlay: v.optional(targetingOverlay),
  context: v.optional(v.record(v.string(), v.unknown())),
});
export type PackageRequest = v.InferOutput<typeof packageRequest>;
