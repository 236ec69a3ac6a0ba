import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Deferral, type Json, type TaskHandle } from '../../core/task.ts';
import { expireForcedRead } from '../../lib/adcp/sandbox-directives.ts';
import { normalizeAgentUrl } from '../../lib/urls.ts';
import { agentKey, type ActivationRow, type DestinationRow, type SearchFilters, type SearchPage, type SignalLookup, type SignalRow } from './catalog.ts';
import type { SignalsCatalog } from './memory-catalog.ts';
import type { ActivationReads } from './activation-reads.ts';
import { decodeCursor, encodeCursor, fingerprintOf } from './cursor.ts';
import { getSignalsInput, type Destination, type GetSignalsInput } from './inputs.ts';
import { agentAccess, SignalRenderer, targetsKey, type RenderOptions } from './render.ts';
import { declareMembers, JsonPiece, type JsonPart } from '../../lib/prebuilt-json.ts';

/** AdCP's default page size; no page is larger than 100. */
const DEFAULT_PAGE = 50;
const MAX_PAGE = 100;

/**
 * Signals the request looks up by reference: a data provider's catalog entry (its domain must
 * match), or a signal of this agent (`agent` / `signal_source` naming this agent's URL). References
 * to other agents' signals or to products' signals match nothing here.
 */
function lookupsOf(input: GetSignalsInput, agentUrl: string): SignalLookup[] | undefined {
  if (!input.signal_ids && !input.signal_refs) return undefined;
  const self = normalizeAgentUrl(agentUrl) ?? agentUrl;
  const isSelf = (url: string) => (normalizeAgentUrl(url) ?? url) === self;
  const out: SignalLookup[] = [];
  for (const r of input.signal_ids ?? []) {
    if (r.source === 'catalog') out.push({ id: r.id, domain: r.data_provider_domain });
    else if (isSelf(r.agent_url)) out.push({ id: r.id, domain: null });
  }
  for (const r of input.signal_refs ?? []) {
    if (r.scope === 'data_provider') out.push({ id: r.signal_id, domain: r.data_provider_domain });
    else if (r.scope === 'signal_source' && isSelf(r.signal_source_url)) out.push({ id: r.signal_id, domain: null });
  }
  return out;
}

const NOTHING: SearchPage = { rows: [], keys: [], hasMore: false };
const isAgent = (d: Destination) => d.type === 'agent';
const idOf = (r: SignalRow) => r.id;

/** What a call searches for, given the catalog's destinations: the targets the caller may use, the filters (null: nothing can match) and the cursor fingerprint. */
interface Plan {
  targets: Destination[] | undefined;
  filters: SearchFilters | null;
  fingerprint: string;
}

function planOf(input: GetSignalsInput, orgId: string, lookups: SignalLookup[] | undefined, limit: number, destinations: Map<string, DestinationRow>): Plan {
  const requested = input.deliver_to?.deployments ?? input.destinations;
  // Sales agents hidden from or denied to the caller are no target; any other agent takes every signal.
  let targets = requested;
  let anyAgent = false;
  if (requested?.some(isAgent)) {
    targets = [];
    for (const d of requested) {
      if (d.type === 'platform' || agentAccess(destinations.get(agentKey(d.agent_url)), orgId) === 'ok') targets.push(d);
    }
    anyAgent = targets.some(isAgent);
  }
  let platforms: string[] | undefined;
  if (targets && !anyAgent) {
    platforms = [];
    for (const d of targets) if (d.type === 'platform') platforms.push(d.platform.toLowerCase());
  }
  const f = input.filters;
  const query: SearchFilters = {
    orgId,
    spec: input.signal_spec,
    lookups,
    catalogTypes: f?.catalog_types,
    dataProviders: f?.data_providers,
    maxCpm: f?.max_cpm,
    minCoverage: f?.min_coverage_percentage,
    countries: input.deliver_to?.countries ?? input.countries,
    platforms,
  } as SearchFilters;
  // The fingerprint covers the query, not the page size or position (they change between pages).
  const fingerprint = fingerprintOf(query);
  const cursor = input.pagination?.cursor;
  query.limit = limit;
  query.after = cursor ? decodeCursor(cursor, fingerprint) : undefined;
  // Targets were named but none is usable, or lookups name nothing of this agent: nothing matches.
  const empty = (requested && !targets?.length) || (lookups && !lookups.length && !input.signal_spec);
  return { targets, filters: empty ? null : query, fingerprint };
}

/** Sandbox deployments (a test controller): directives that answer the next get_signals submitted. */
export interface ForcedArms {
  take(principalId: string, task: TaskHandle): Promise<Deferral | undefined>;
}

export function getSignalsTask(catalog: SignalsCatalog, reads: ActivationReads, options: RenderOptions, forced?: ForcedArms) {
  const renderer = new SignalRenderer(options);
  return defineTask({
    name: 'get_signals',
    description:
      'Discover audience signals for a natural-language spec, or look them up by signal_ids / signal_refs, filtered by deployment targets, countries, catalog type, provider, CPM and coverage. Paginated with pagination.cursor.',
    protocol: 'signals',
    errorShape: 'signals',
    requestSchema: 'signals/get-signals-request.json',
    // AdCP 3.0.6 requires `signals` in every get_signals answer, a failed one included.
    failureBody: { signals: [] },
    input: getSignalsInput,
    async handler({ input, principal, task }) {
      if (forced) {
        const deferral = await forced.take(principal.id, task);
        if (deferral) return deferral;
      }
      if (input.discovery_mode === 'wholesale') {
        throw new ProtocolError('UNSUPPORTED_FEATURE', 'discovery_mode: this agent offers brief discovery only (see discovery_modes in its capabilities)', {
          field: 'discovery_mode',
        });
      }
      const lookups = lookupsOf(input, options.agentUrl);
      const limit = Math.min(input.pagination?.max_results ?? input.max_results ?? DEFAULT_PAGE, MAX_PAGE);

      // The answer comes from this instance's copy of the catalog, proven current by its snapshot
      // or by the catalog version read with the caller's activations. A copy found behind (a write
      // committed before its notification arrived) is reloaded; a copy loaded after the call began
      // is current.
      let snapshot = await catalog.snapshot.get();
      let reloaded = false;
      for (;;) {
        const plan = planOf(input, principal.orgId, lookups, limit, snapshot.destinations);
        const page = plan.filters ? catalog.search(snapshot, plan.filters) : NOTHING;
        const read = await reads.read(principal.id, page.rows.map(idOf));
        if (!reloaded && !catalog.snapshot.settled(snapshot) && read.version !== snapshot.version) {
          snapshot = await catalog.snapshot.refresh();
          reloaded = true;
          continue;
        }
        return answer(input, plan, page, read.activations, renderer);
      }
    },
    resume: expireForcedRead,
  });
}

const [OPEN_LIST, COMMA, CLOSE_LIST] = ['[', ',', ']'].map(JsonPiece.text) as [JsonPiece, JsonPiece, JsonPiece];

/** The get_signals answer of a page: its signals rendered for the targets with the caller's activations, and the next page's cursor; with its JSON. */
function answer(input: GetSignalsInput, plan: Plan, page: SearchPage, activations: ActivationRow[], renderer: SignalRenderer): Json {
  const signals: Json[] = [];
  const json: JsonPart[] = [OPEN_LIST];
  const key = targetsKey(plan.targets);
  for (const row of page.rows) {
    if (signals.length) json.push(COMMA);
    signals.push(renderer.render(row, plan.targets, key, activations, json));
  }
  json.push(CLOSE_LIST);
  const last = page.keys[page.keys.length - 1];
  return declareMembers(
    {
      signals,
      // Activation state is the caller's: such an answer (or one for an account) is not shareable.
      cache_scope: input.account || activations.length ? 'account' : 'public',
      pagination: page.hasMore && last ? { has_more: true, cursor: encodeCursor(last, plan.fingerprint) } : { has_more: false },
    },
    { signals: json },
  );
}
