import * as v from 'valibot';
import { DOMAIN_PATTERN } from '../../lib/adcp/patterns.ts';

// Input schemas of the signals tasks: the seed's fields plus every field of the AdCP request
// schemas (3.0.6 and 3.1.19). Objects are loose: members AdCP allows but this agent does not use
// (`ext`, `fields`, ...) reach the handler instead of being stripped.

const signalIdPattern = /^[a-zA-Z0-9_-]+$/;
const text = (max: number) => v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
const absoluteUrl = v.pipe(v.string(), v.maxLength(2048), v.url('must be an absolute URL'));
const domain = v.pipe(v.string(), v.maxLength(253), v.regex(DOMAIN_PATTERN, 'must be a lowercase domain'));
const signalId = v.pipe(v.string(), v.maxLength(128), v.regex(signalIdPattern, 'must match ^[a-zA-Z0-9_-]+$'));

const destination = v.variant(
  'type',
  [
    v.looseObject({ type: v.literal('platform'), platform: text(100), account: v.optional(v.pipe(v.string(), v.maxLength(200))) }),
    v.looseObject({ type: v.literal('agent'), agent_url: absoluteUrl, account: v.optional(v.pipe(v.string(), v.maxLength(200))) }),
  ],
  'must be an object {type: "platform", platform} or {type: "agent", agent_url}',
);
export type Destination = v.InferOutput<typeof destination>;

const destinations = (max: number) =>
  v.pipe(
    v.array(destination, 'must be an array of deployment targets'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(max, `accepts at most ${max} targets`),
  );
const countries = v.pipe(
  v.array(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be ISO 3166-1 alpha-2 codes (e.g. "US")')), 'must be an array of country codes'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(250, 'accepts at most 250 countries'),
);

/** AdCP 3.0 `signal_id` (deprecated in 3.1): a data provider's catalog entry or an agent's own signal. */
export const signalIdRef = v.variant(
  'source',
  [
    v.looseObject({ source: v.literal('catalog'), data_provider_domain: domain, id: signalId }),
    v.looseObject({ source: v.literal('agent'), agent_url: absoluteUrl, id: signalId }),
  ],
  'must be {source: "catalog", data_provider_domain, id} or {source: "agent", agent_url, id}',
);

/** AdCP 3.1 `signal_ref`. */
export const signalRef = v.variant(
  'scope',
  [
    v.looseObject({ scope: v.literal('data_provider'), data_provider_domain: domain, signal_id: signalId }),
    v.looseObject({ scope: v.literal('signal_source'), signal_source_url: absoluteUrl, signal_id: signalId }),
    v.looseObject({ scope: v.literal('product'), signal_id: signalId }),
  ],
  'must be {scope: "data_provider", data_provider_domain, signal_id}, {scope: "signal_source", signal_source_url, signal_id} or {scope: "product", signal_id}',
);

/** `account`: an account id, or a brand and operator (AdCP core/account-ref.json). */
const account = v.union(
  [v.strictObject({ account_id: text(255) }), v.looseObject({ brand: v.looseObject({ domain: v.optional(domain) }), operator: domain })],
  'must be {account_id} or {brand, operator}',
);
const ext = v.record(v.string(), v.unknown(), 'must be an object');
const version = {
  adcp_major_version: v.optional(v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1), v.maxValue(99))),
  adcp_version: v.optional(v.pipe(v.string(), v.regex(/^\d+\.\d+(-[a-zA-Z0-9.-]+)?$/, 'must be a release such as "3.1"'))),
};

const lookupList = <T extends v.GenericSchema>(item: T) =>
  v.optional(v.pipe(v.array(item, 'must be an array'), v.minLength(1, 'must not be empty'), v.maxLength(100, 'accepts at most 100 entries')));

export const getSignalsInput = v.pipe(
  v.looseObject({
    ...version,
    discovery_mode: v.optional(v.picklist(['brief', 'wholesale'], 'must be brief or wholesale')),
    account: v.optional(account),
    signal_spec: v.optional(text(2000)),
    signal_ids: lookupList(signalIdRef),
    signal_refs: lookupList(signalRef),
    // The seed names the targets deliver_to; AdCP clients send destinations and countries at the top level.
    deliver_to: v.optional(v.looseObject({ deployments: destinations(50), countries })),
    destinations: v.optional(destinations(50)),
    countries: v.optional(countries),
    filters: v.optional(
      v.looseObject({
        catalog_types: v.optional(
          v.pipe(
            v.array(v.picklist(['marketplace', 'custom', 'owned'], 'must be marketplace, custom or owned')),
            v.minLength(1, 'must not be empty'),
            v.maxLength(3),
          ),
        ),
        data_providers: v.optional(v.pipe(v.array(text(200)), v.minLength(1, 'must not be empty'), v.maxLength(50, 'accepts at most 50 providers'))),
        max_cpm: v.optional(v.pipe(v.number('must be a number'), v.minValue(0, 'must be at least 0'))),
        max_percent: v.optional(v.pipe(v.number('must be a number'), v.minValue(0, 'must be at least 0'), v.maxValue(100, 'must be at most 100'))),
        min_coverage_percentage: v.optional(
          v.pipe(v.number('must be a number'), v.minValue(0, 'must be at least 0'), v.maxValue(100, 'must be between 0 and 100')),
        ),
        ext: v.optional(ext),
      }),
    ),
    fields: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.minLength(1), v.maxLength(64))),
    // Deprecated page size: AdCP asks agents to honour it up to 100 (larger values are capped, not refused).
    max_results: v.optional(v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'))),
    pagination: v.optional(
      v.strictObject({
        max_results: v.optional(
          v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(100, 'must be at most 100')),
        ),
        cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(2048))),
      }),
    ),
    ext: v.optional(ext),
  }),
  v.forward(
    v.check(
      (i) => !!(i.signal_spec || i.signal_ids || i.signal_refs) || i.discovery_mode === 'wholesale',
      'is required (or look signals up with signal_ids or signal_refs)',
    ),
    ['signal_spec'],
  ),
);
export type GetSignalsInput = v.InferOutput<typeof getSignalsInput>;

export const activateSignalInput = v.pipe(
  v.looseObject({
    ...version,
    signal_agent_segment_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(255)),
    // The spec names the array `deployments`; AdCP clients name it `destinations`.
    deployments: v.optional(destinations(20)),
    destinations: v.optional(destinations(20)),
    pricing_option_id: v.optional(text(255)),
    action: v.optional(v.picklist(['activate', 'deactivate'], 'must be activate or deactivate'), 'activate'),
    account: v.optional(account),
    governance_context: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.regex(/^[\x20-\x7E]+$/, 'must be printable ASCII'))),
    ext: v.optional(ext),
  }),
  v.forward(
    v.check((i) => !!(i.deployments ?? i.destinations), 'is required (deployment targets; `deployments` is accepted too)'),
    ['destinations'],
  ),
);
