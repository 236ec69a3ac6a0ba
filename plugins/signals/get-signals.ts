import { ProtocolError } from '../../core/errors.ts';
import { defineTask } from '../../core/task.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { normalizeAgentUrl } from '../../lib/urls.ts';
import { agentKey, findDestinations, searchSignals, type SignalLookup } from './catalog.ts';
import { decodeCursor, encodeCursor, fingerprintOf } from './cursor.ts';
import { getSignalsInput, type Destination, type GetSignalsInput } from './inputs.ts';
import { agentAccess, renderSignal, type RenderOptions } from './render.ts';

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

export function getSignalsTask(db: DatabasePort, options: RenderOptions) {
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
      const requested = input.deliver_to?.deployments ?? input.destinations;
      const countries = input.deliver_to?.countries ?? input.countries;
      // Sales agents hidden from or denied to the caller are no target; any other agent takes every signal.
      let targets: Destination[] | undefined = requested;
      const agents = requested?.filter((d) => d.type === 'agent') ?? [];
      if (agents.length) {
        const known = await findDestinations(
          db,
          agents.map((d) => agentKey(d.agent_url)),
        );
        targets = requested!.filter((d) => d.type === 'platform' || agentAccess(known.get(agentKey(d.agent_url)), principal.orgId) === 'ok');
      }
      const anyAgent = !!targets?.some((d) => d.type === 'agent');
      const platforms = targets?.flatMap((d) => (d.type === 'platform' ? [d.platform.toLowerCase()] : []));
      const lookups = lookupsOf(input, options.agentUrl);
      const f = input.filters;
      const query = {
        orgId: principal.orgId,
        spec: input.signal_spec,
        lookups,
        catalogTypes: f?.catalog_types,
        dataProviders: f?.data_providers,
        maxCpm: f?.max_cpm,
        minCoverage: f?.min_coverage_percentage,
        countries,
        platforms: anyAgent ? undefined : platforms,
      };
      const fingerprint = fingerprintOf(query);
      const cursor = input.pagination?.cursor;
      const limit = Math.min(input.pagination?.max_results ?? input.max_results ?? DEFAULT_PAGE, MAX_PAGE);
      // Targets were named but none is usable, or lookups name nothing of this agent: nothing matches.
      const empty = (requested && !targets?.length) || (lookups && !lookups.length && !input.signal_spec);
      const { rows, activations, hasMore } = empty
        ? { rows: [], activations: [], hasMore: false }
        : await searchSignals(db, { ...query, limit, after: cursor ? decodeCursor(cursor, fingerprint) : undefined }, principal.id);
      const last = rows[rows.length - 1];
      return {
        signals: rows.map((r) => renderSignal(r, targets, activations, options)),
        // Activation state is the caller's: such an answer (or one for an account) is not shareable.
        cache_scope: input.account || activations.length ? 'account' : 'public',
        pagination: hasMore && last ? { has_more: true, cursor: encodeCursor(last.sortKey, fingerprint) } : { has_more: false },
      };
    },
  });
}
