import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { normalizeAgentUrl } from '../../lib/urls.ts';
import {
  agentKey,
  findDestinations,
  searchSignalsSql,
  type ActivationRow,
  type DestinationRow,
  type SearchFilters,
  type SearchPage,
  type SignalLookup,
  type SignalRow,
} from './catalog.ts';
import { queryOf, type SignalsCatalog } from './memory-catalog.ts';
import type { ActivationReads } from './activation-reads.ts';
import { decodeCursor, encodeCursor, fingerprintOf } from './cursor.ts';
import { getSignalsInput, type Destination, type GetSignalsInput } from './inputs.ts';
import { agentAccess, renderSignal, type RenderCache, type RenderOptions } from './render.ts';

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

/** Tries from memory before the database answers instead (each miss reloads the copy: the catalog changed meanwhile). */
const MEMORY_ATTEMPTS = 3;

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

export function getSignalsTask(db: DatabasePort, catalog: SignalsCatalog, reads: ActivationReads, options: RenderOptions) {
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
    async handler({ input, principal }) {
      if (input.discovery_mode === 'wholesale') {
        throw new ProtocolError('UNSUPPORTED_FEATURE', 'discovery_mode: this agent offers brief discovery only (see discovery_modes in its capabilities)', {
          field: 'discovery_mode',
        });
      }
      const lookups = lookupsOf(input, options.agentUrl);
      const limit = Math.min(input.pagination?.max_results ?? input.max_results ?? DEFAULT_PAGE, MAX_PAGE);

      let plan: Plan | null = null;
      let page: SearchPage | null = null;
      let activations: ActivationRow[] = [];
      /** The copy an answer from memory came from (its render cache). */
      let source: RenderCache | undefined;
      for (let attempt = 0; attempt < MEMORY_ATTEMPTS; attempt++) {
        const snapshot = await catalog.snapshot.get();
        plan = planOf(input, principal.orgId, lookups, limit, snapshot.destinations);
        const f = plan.filters;
        const query = f ? queryOf(f) : '';
        const found = !f || (!query && !f.lookups?.length) ? NOTHING : catalog.search(snapshot, f, query ? await catalog.operands(query) : []);
        if (!found) break;
        // The caller's activations, and what proves the copy current: the catalog version read with
        // them (one query per round of requests), or on a local database the copy still being the
        // current one (notifications arrive before a writing call returns).
        const read = await reads.read(principal.id, found.rows.map(idOf));
        const current = read.version === null ? catalog.snapshot.fresh && catalog.snapshot.peek() === snapshot : read.version === snapshot.version;
        if (current) {
          page = found;
          activations = read.activations;
          source = snapshot.rendered;
          break;
        }
        // A write committed after the copy was loaded and its notification is not here yet (or was lost).
        if (catalog.snapshot.peek() === snapshot) await catalog.snapshot.refresh();
      }
      if (!page) {
        // What memory does not reproduce, or a catalog changing faster than it reloads: the database ranks.
        const agents = (input.deliver_to?.deployments ?? input.destinations)?.filter(isAgent) ?? [];
        const destinations = agents.length
          ? await findDestinations(
              db,
              agents.map((d) => agentKey(d.agent_url)),
            )
          : new Map<string, DestinationRow>();
        plan = planOf(input, principal.orgId, lookups, limit, destinations);
        const found = plan.filters ? await searchSignalsSql(db, plan.filters, principal.id) : { ...NOTHING, activations: [] };
        page = found;
        activations = found.activations;
      }
      const { targets, fingerprint } = plan!;
      const signals: Json[] = [];
      for (const row of page.rows) signals.push(renderSignal(row, targets, activations, options, source));
      const last = page.keys[page.keys.length - 1];
      return {
        signals,
        // Activation state is the caller's: such an answer (or one for an account) is not shareable.
        cache_scope: input.account || activations.length ? 'account' : 'public',
        pagination: page.hasMore && last ? { has_more: true, cursor: encodeCursor(last, fingerprint) } : { has_more: false },
      };
    },
  });
}
