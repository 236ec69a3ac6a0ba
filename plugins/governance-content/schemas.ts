import * as v from 'valibot';
import { domain, versionFields } from '../../lib/adcp/request-fields.ts';

export { domain, versionFields };
import { CHANNELS } from '../../lib/adcp/channels.ts';

const text = (max: number) => v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`));
const nonEmpty = (max: number) =>
  v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
const list = <T extends v.GenericSchema>(item: T, max: number) =>
  v.pipe(v.array(item, 'must be an array'), v.minLength(1, 'must not be empty'), v.maxLength(max, `accepts at most ${max} entries`));
const isoDate = v.pipe(v.string('must be a string'), v.isoDate('must be a date (YYYY-MM-DD)'));
const dateTime = v.pipe(
  v.string('must be a string'),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, 'must be an RFC 3339 date-time'),
);
const uri = v.pipe(v.string('must be a string'), v.maxLength(2048), v.url('must be an absolute URL'));

export const id = v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
export const channel = v.picklist(CHANNELS, `must be one of ${CHANNELS.join(', ')}`);

/** core/brand-ref.json: the members accounts keep. */
const brandRef = v.looseObject({ domain, brand_id: v.optional(nonEmpty(128)) }, 'must be an object {domain}');

/** `{account_id}` or `{brand: {domain}, operator, sandbox?}` (core/account-ref.json). */
export const accountRef = v.union(
  [v.strictObject({ account_id: nonEmpty(128) }), v.strictObject({ brand: brandRef, operator: domain, sandbox: v.optional(v.boolean()) })],
  'must be {account_id} or {brand: {domain}, operator}',
);
export type AccountRef = v.InferOutput<typeof accountRef>;

/** core/pagination-request.json */
export const pagination = v.strictObject({
  max_results: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(100, 'must be at most 100'))),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(512))),
});

const exemplar = v.strictObject({ scenario: nonEmpty(2000), explanation: nonEmpty(2000) }, 'must be {scenario, explanation}');

/** governance/policy-entry.json (bespoke policies: flat policy_id, no colons or slashes). */
export const policyEntry = v.strictObject(
  {
    policy_id: v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must be a flat id (letters, digits, _ . -; no colons or slashes)')),
    source: v.optional(v.picklist(['registry', 'inline'], 'must be registry or inline')),
    version: v.optional(nonEmpty(64)),
    name: v.optional(nonEmpty(256)),
    category: v.optional(v.picklist(['regulation', 'standard'], 'must be regulation or standard')),
    enforcement: v.picklist(['must', 'should', 'may'], 'must be must, should or may'),
    requires_human_review: v.optional(v.boolean()),
    jurisdictions: v.optional(v.pipe(v.array(nonEmpty(64)), v.maxLength(250))),
    region_aliases: v.optional(v.record(v.string(), v.array(v.string()))),
    policy_categories: v.optional(v.pipe(v.array(nonEmpty(64)), v.maxLength(50))),
    channels: v.optional(v.pipe(v.array(channel), v.maxLength(CHANNELS.length))),
    governance_domains: v.optional(v.pipe(v.array(nonEmpty(64)), v.maxLength(20))),
    effective_date: v.optional(isoDate),
    sunset_date: v.optional(isoDate),
    source_url: v.optional(uri),
    source_name: v.optional(nonEmpty(256)),
    policy: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(5000, 'must be at most 5000 characters')),
    guidance: v.optional(text(5000)),
    exemplars: v.optional(v.strictObject({ pass: v.optional(v.array(exemplar)), fail: v.optional(v.array(exemplar)) })),
    ext: v.optional(v.record(v.string(), v.unknown())),
  },
  'must be a policy entry {policy_id, enforcement, policy}',
);
export type PolicyEntry = v.InferOutput<typeof policyEntry>;

/** Policies of one configuration: policy_ids unique (findings name them). */
export const policies = v.pipe(
  list(policyEntry, 200),
  v.check((ps) => new Set(ps.map((p) => p.policy_id)).size === ps.length, 'policy_id values must be unique'),
);
export const registryPolicyIds = list(nonEmpty(256), 200);

const languages = list(v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, 'must be a BCP 47 language tag')), 50);
const countries = list(v.pipe(v.string('must be a string'), v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code (uppercase)')), 250);
const channels = list(channel, CHANNELS.length);

/** Scope of create (languages_any required) and update (every member optional). */
export const scope = v.strictObject(
  { countries_all: v.optional(countries), channels_any: v.optional(channels), languages_any: languages, description: v.optional(text(2000)) },
  'must be an object {languages_any, ...}',
);
export const scopePatch = v.strictObject(
  { countries_all: v.optional(countries), channels_any: v.optional(channels), languages_any: v.optional(languages), description: v.optional(text(2000)) },
  'must be an object',
);
export type Scope = v.InferOutput<typeof scopePatch>;

/** content-standards/artifact.json: the required members checked, the rest kept as given (the schema allows more). */
const asset = v.variant(
  'type',
  [
    v.looseObject({ type: v.literal('text'), content: text(100_000) }),
    v.looseObject({ type: v.literal('image'), url: uri, alt_text: v.optional(text(5000)), caption: v.optional(text(5000)) }),
    v.looseObject({ type: v.literal('video'), url: uri, transcript: v.optional(text(200_000)) }),
    v.looseObject({ type: v.literal('audio'), url: uri, transcript: v.optional(text(200_000)) }),
  ],
  'must be an asset {type: text|image|video|audio, ...}',
);
export const artifact = v.looseObject(
  { property_rid: nonEmpty(256), artifact_id: nonEmpty(256), url: v.optional(uri), assets: v.pipe(v.array(asset, 'must be an array'), v.maxLength(200)) },
  'must be an artifact {property_rid, artifact_id, assets}',
);
export type Artifact = v.InferOutput<typeof artifact>;

const urlExemplar = v.strictObject({ type: v.literal('url'), value: uri, language: v.optional(nonEmpty(35)) });
const exemplarItem = v.union([urlExemplar, artifact], 'must be {type: "url", value} or an artifact');
export const calibrationExemplars = v.strictObject({
  pass: v.optional(v.pipe(v.array(exemplarItem), v.maxLength(100))),
  fail: v.optional(v.pipe(v.array(exemplarItem), v.maxLength(100))),
});

export { countries, channels, languages, dateTime, nonEmpty };
