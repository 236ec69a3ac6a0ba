import * as v from 'valibot';
import { normalizeAgentUrl } from '../../lib/urls.ts';
import { memoized } from '../../lib/memoized.ts';
import { sql } from '../../core/sql.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { Queryable, DatabasePort } from '../../core/ports/database.ts';
import type { SignalsCursor } from './cursor.ts';
import { DOMAIN_PATTERN } from '../../lib/adcp/patterns.ts';

const country = v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code'));
const minutes = v.pipe(v.number(), v.minValue(0));
const uuid = v.pipe(v.string(), v.uuid());

const currency = v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'));
const optionId = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 _ . : -'));
const amount = v.pipe(v.number(), v.minValue(0));

/** A named pricing option (AdCP vendor-pricing-option): its id is what activate_signal and report_usage name. */
export const seedPricingOption = v.variant('model', [
  v.object({ pricing_option_id: optionId, model: v.literal('cpm'), cpm: amount, currency }),
  v.object({
    pricing_option_id: optionId,
    model: v.literal('percent_of_media'),
    percent: v.pipe(v.number(), v.minValue(0), v.maxValue(100)),
    max_cpm: v.optional(amount),
    currency,
  }),
  v.object({ pricing_option_id: optionId, model: v.literal('flat_fee'), amount, period: v.picklist(['monthly', 'quarterly', 'annual', 'campaign']), currency }),
  v.object({
    pricing_option_id: optionId,
    model: v.literal('per_unit'),
    unit: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
    unit_price: amount,
    currency,
  }),
]);
export type PricingOption = v.InferOutput<typeof seedPricingOption>;

/** One catalog entry as a seed file or the import CLI gives it. */
export const seedSignal = v.object({
  id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,128}$/, 'must match ^[A-Za-z0-9_-]{1,128}$')),
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  description: v.pipe(v.string(), v.minLength(1), v.maxLength(2000)),
  signal_type: v.picklist(['marketplace', 'custom', 'owned']),
  data_provider: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  data_provider_domain: v.optional(v.pipe(v.string(), v.regex(DOMAIN_PATTERN, 'must be a lowercase domain'))),
  coverage_percentage: v.pipe(v.number(), v.minValue(0), v.maxValue(100)),
  pricing: v.nullish(v.object({ cpm: v.pipe(v.number(), v.minValue(0)), currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')) })),
  /** Named options instead of the one derived from `pricing`; ids unique within the signal. */
  pricing_options: v.optional(
    v.pipe(
      v.array(seedPricingOption),
      v.minLength(1, 'must not be empty'),
      v.check((list) => new Set(list.map((o) => o.pricing_option_id)).size === list.length, 'pricing_option_id must be unique within the signal'),
    ),
  ),
  value_type: v.optional(v.picklist(['binary', 'categorical', 'numeric']), 'binary'),
  /** The values of a categorical signal. */
  categories: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(100))), v.minLength(1))),
  /** The bounds of a numeric signal. */
  range: v.optional(
    v.pipe(
      v.object({ min: v.number(), max: v.number() }),
      v.check((r) => r.min <= r.max, 'min must not exceed max'),
    ),
  ),
  tags: v.optional(v.array(v.pipe(v.string(), v.maxLength(64))), []),
  countries: v.optional(v.array(country), []),
  owner_org: v.optional(uuid),
  platforms: v.optional(
    v.array(v.object({ platform: v.pipe(v.string(), v.minLength(1), v.maxLength(100)), estimated_activation_duration_minutes: minutes })),
    [],
  ),
  agents: v.optional(v.array(v.object({ agent_url: v.pipe(v.string(), v.url()), estimated_activation_duration_minutes: minutes })), []),
});

export const seedDestination = v.variant('type', [
  v.object({ type: v.literal('platform'), platform: v.pipe(v.string(), v.minLength(1)), allowed_orgs: v.optional(v.array(uuid)) }),
  v.object({
    type: v.literal('agent'),
    agent_url: v.pipe(v.string(), v.url()),
    visibility: v.optional(v.picklist(['public', 'private']), 'public'),
    owner_org: v.optional(uuid),
    allowed_orgs: v.optional(v.array(uuid)),
  }),
]);

export const seedFile = v.object({
  destinations: v.optional(v.array(seedDestination), []),
  signals: v.array(seedSignal),
});

export type SeedSignal = v.InferOutput<typeof seedSignal>;
export type SeedFile = v.InferOutput<typeof seedFile>;

export interface SignalRow {
  id: string;
  name: string;
  description: string;
  signal_type: 'marketplace' | 'custom' | 'owned';
  data_provider: string;
  data_provider_domain: string | null;
  coverage_percentage: string | number;
  cpm: string | number | null;
  currency: string | null;
  tags: string[];
  countries: string[];
  owner_org: string | null;
  platforms: { platform: string; estimated_activation_duration_minutes: number }[];
  agents: { agent_url: string; estimated_activation_duration_minutes: number }[];
  pricing_options: PricingOption[] | null;
  value_type: 'binary' | 'categorical' | 'numeric';
  categories: string[] | null;
  value_range: { min: number; max: number } | null;
}

export interface DestinationRow {
  key: string;
  type: 'platform' | 'agent';
  platform: string | null;
  agent_url: string | null;
  visibility: 'public' | 'private';
  owner_org: string | null;
  allowed_orgs: string[] | null;
}

export const platformKey = (platform: string) => `platform:${platform.toLowerCase()}`;
/** An agent URL as the catalog keys it (normalizeAgentUrl; unparsable ones as they are). A call names each a few times: memoized. */
export const agentUrlKey = memoized(10_000, (url) => normalizeAgentUrl(url) ?? url);

export const agentKey = (url: string) => `agent:${agentUrlKey(url)}`;

/**
 * Channel of catalog change notifications, per schema so deployments sharing one database in
 * different schemas do not reload each other's catalogs (a channel name is at most 63 bytes).
 */
export const CATALOG_CHANNEL = sql.raw(`'signal_catalog_' || left(md5(current_schema()), 16)`);

/**
 * Announce a catalog write (signals, destinations) inside the writing transaction: bumps the
 * catalog version (every answer from memory is checked against it) and notifies every instance
 * on commit, so each reloads its copy. Every writer of signals or signal_destinations calls it.
 */
export async function announceCatalogChange(tx: Queryable): Promise<void> {
  await tx.query(sql`
    WITH v AS (UPDATE signal_catalog_version SET version = version + 1 RETURNING version)
    SELECT pg_notify(${CATALOG_CHANNEL}, v.version::text) FROM v`);
}

/** Upsert a validated catalog (seed file or CLI import); returns counts. */
export async function importCatalog(db: DatabasePort, raw: unknown): Promise<{ signals: number; destinations: number }> {
  const file = parseOrThrow(seedFile, raw);
  await db.transaction(async (tx) => {
    for (const d of file.destinations) {
      const key = d.type === 'platform' ? platformKey(d.platform) : agentKey(d.agent_url);
      await tx.query(sql`
        INSERT INTO signal_destinations (key, type, platform, agent_url, visibility, owner_org, allowed_orgs)
        VALUES (${key}::text, ${d.type}::text, ${d.type === 'platform' ? d.platform.toLowerCase() : null}::text,
                ${d.type === 'agent' ? (normalizeAgentUrl(d.agent_url) ?? d.agent_url) : null}::text, ${d.type === 'agent' ? d.visibility : 'public'}::text,
                ${d.type === 'agent' ? (d.owner_org ?? null) : null}::uuid, ${d.allowed_orgs ?? null}::uuid[])
        ON CONFLICT (key) DO UPDATE SET visibility = EXCLUDED.visibility, owner_org = EXCLUDED.owner_org, allowed_orgs = EXCLUDED.allowed_orgs`);
    }
    for (const s of file.signals) await upsertSignal(tx, s);
    await announceCatalogChange(tx);
  });
  return { signals: file.signals.length, destinations: file.destinations.length };
}

async function upsertSignal(tx: Queryable, s: SeedSignal): Promise<void> {
  const platforms = s.platforms.map((p) => ({ ...p, platform: p.platform.toLowerCase() }));
  const agents = s.agents.map((a) => ({ ...a, agent_url: normalizeAgentUrl(a.agent_url) ?? a.agent_url }));
  // The CPM filters and the 3.0 `pricing` member read one CPM: the given one, else the first CPM option's.
  const cpmOption = s.pricing_options?.find((o) => o.model === 'cpm');
  const cpm = s.pricing ?? (cpmOption ? { cpm: cpmOption.cpm, currency: cpmOption.currency } : null);
  await tx.query(sql`
    INSERT INTO signals (id, name, description, signal_type, data_provider, data_provider_domain, coverage_percentage, cpm, currency,
                         tags, countries, owner_org, platforms, agents, platform_names, agent_urls, pricing_options, value_type, categories, value_range, updated_at)
    VALUES (${s.id}::text, ${s.name}::text, ${s.description}::text, ${s.signal_type}::text, ${s.data_provider}::text,
            ${s.data_provider_domain ?? null}::text, ${s.coverage_percentage}::numeric, ${cpm?.cpm ?? null}::numeric,
            ${cpm?.currency ?? null}::text, ${s.tags}::text[], ${s.countries}::text[], ${s.owner_org ?? null}::uuid,
            ${platforms}::jsonb, ${agents}::jsonb, ${platforms.map((p) => p.platform)}::text[], ${agents.map((a) => a.agent_url)}::text[],
            ${s.pricing_options ?? null}::jsonb, ${s.value_type}::text, ${s.categories ?? null}::jsonb, ${s.range ?? null}::jsonb, now())
    ON CONFLICT (id) DO UPDATE SET
      name = EXCLUDED.name, description = EXCLUDED.description, signal_type = EXCLUDED.signal_type,
      data_provider = EXCLUDED.data_provider, data_provider_domain = EXCLUDED.data_provider_domain,
      coverage_percentage = EXCLUDED.coverage_percentage, cpm = EXCLUDED.cpm, currency = EXCLUDED.currency,
      tags = EXCLUDED.tags, countries = EXCLUDED.countries, owner_org = EXCLUDED.owner_org, platforms = EXCLUDED.platforms,
      agents = EXCLUDED.agents, platform_names = EXCLUDED.platform_names, agent_urls = EXCLUDED.agent_urls,
      pricing_options = EXCLUDED.pricing_options, value_type = EXCLUDED.value_type, categories = EXCLUDED.categories,
      value_range = EXCLUDED.value_range, updated_at = now()`);
}

export async function countSignals(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM signals`);
  return row?.n ?? 0;
}

/** A signal named by a lookup (`signal_ids` / `signal_refs`): its id, and the data provider when the reference names one. */
export interface SignalLookup {
  id: string;
  domain: string | null;
}

export interface SearchFilters {
  orgId: string;
  /** Natural-language spec (ranked by the catalog's text index, signal-index.ts). */
  spec?: string;
  /** Signals looked up by reference: they match whatever the spec says and come first. */
  lookups?: SignalLookup[];
  catalogTypes?: string[];
  dataProviders?: string[];
  maxCpm?: number;
  minCoverage?: number;
  countries?: string[];
  /** Platforms the signals must be deployable to; none when a sales agent is a target (any signal deploys there). */
  platforms?: string[];
  limit: number;
  after?: SignalsCursor;
}

/** A page of a search: the signals in ranking order, each one's sort key (a cursor resumes after the last), and whether more follow. */
export interface SearchPage {
  rows: SignalRow[];
  keys: SignalsCursor[];
  hasMore: boolean;
}

/** Which activations a get_signals answer needs: the caller's, of the signals on its page. */
export interface ActivationsWanted {
  principalId: string;
  signalIds: string[];
}

/**
 * The activations several answers need (each caller's of its page's signals; in no particular
 * order, each with its principal) and the catalog version, read together in one query: an answer
 * from memory is exact when that version is the one its copy was loaded at.
 */
export async function activationsAndVersion(
  db: Queryable,
  wanted: readonly ActivationsWanted[],
): Promise<{ version: string; activations: (ActivationRow & { principal_id: string })[] }> {
  // One JSON parameter ([[principal, [signal ids]], ...]): serialized natively, where text arrays are escaped element by element.
  const pairs = wanted.map((w) => [w.principalId, w.signalIds]);
  const [row] = await db.query<{ version: string; activations: (ActivationRow & { principal_id: string })[] }>(sql`
    SELECT (SELECT version::text FROM signal_catalog_version) AS version, COALESCE((
      SELECT jsonb_agg(jsonb_build_object('principal_id', a.principal_id, 'id', a.id::text, 'signal_id', a.signal_id,
        'destination_key', a.destination_key, 'destination', a.destination, 'status', a.status, 'activation_key', a.activation_key,
        'estimated_minutes', a.estimated_minutes, 'deployed_at', a.deployed_at))
      FROM signal_activations a
      WHERE (a.principal_id, a.signal_id) IN (
        SELECT w->>0, s FROM jsonb_array_elements(${pairs}::jsonb) AS w, jsonb_array_elements_text(w->1) AS s)),
      '[]'::jsonb) AS activations`);
  return row!;
}

/** Up to `limit` of a principal's activations (a local copy's load). */
export function activationsOf(db: Queryable, principalId: string, limit: number): Promise<ActivationRow[]> {
  return db.query<ActivationRow>(sql`
    SELECT id::text, signal_id, destination_key, destination, status, activation_key, estimated_minutes, deployed_at
    FROM signal_activations WHERE principal_id = ${principalId}::text LIMIT ${limit}::int`);
}

export interface ActivationRow {
  id: string;
  signal_id: string;
  destination_key: string;
  destination: Record<string, unknown>;
  status: 'pending' | 'live';
  activation_key: Record<string, unknown> | null;
  estimated_minutes: string | number;
  deployed_at: string | Date | null;
}
