import type { CatalogProperty, PublisherCatalogPort } from '../../core/ports/publisher-catalog.ts';
import type { Json } from '../../core/task.ts';
import { CATALOG_LIMIT, keyOf, MAX_RESOLVED, type Resolution } from './resolution.ts';
import { IDENTIFIER_TYPES } from '../../lib/adcp/property-vocabularies.ts';
import type { BasePropertySource, Identifier, PropertyFilters } from './schemas.ts';

/** One resolved property: its identifiers, and what the registry knows of it (nothing for a literal identifier it does not hold). */
interface Candidate {
  identifiers: Identifier[];
  known?: CatalogProperty;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(IDENTIFIER_TYPES);
const toIdentifiers = (p: CatalogProperty): Identifier[] =>
  p.identifiers.filter((i) => KNOWN_TYPES.has(i.type) && i.value).map((i) => ({ type: i.type as Identifier['type'], value: i.value }));

/** Candidates of one source: registry records, and literal identifiers (with their registry record when there is one). */
async function candidatesOf(source: BasePropertySource, catalog: PublisherCatalogPort | undefined): Promise<Candidate[]> {
  if (source.selection_type === 'identifiers') {
    const known = catalog ? await catalog.propertiesByIdentifiers(source.identifiers, CATALOG_LIMIT) : [];
    const byKey = new Map<string, CatalogProperty>();
    for (const p of known) for (const i of p.identifiers) byKey.set(keyOf(i), p);
    return source.identifiers.map((i) => ({ identifiers: [i], known: byKey.get(keyOf(i)) }));
  }
  if (!catalog) return [];
  const found =
    source.selection_type === 'publisher_tags'
      ? await catalog.propertiesByTags(source.publisher_domain, source.tags, CATALOG_LIMIT)
      : await catalog.propertiesByIds(source.publisher_domain, source.property_ids, CATALOG_LIMIT);
  return found.map((p) => ({ identifiers: toIdentifiers(p), known: p }));
}

/** Whether identifier `id` is one `filter` names: exact, or a domain of `*.base` / `base` (with www. and m.). */
function matcher(list: readonly Identifier[]): (id: Identifier) => boolean {
  const exact = new Set(list.map(keyOf));
  const wildcards = list.filter((i) => i.type === 'domain' && i.value.startsWith('*.')).map((i) => i.value.slice(2).toLowerCase());
  return (id) => {
    const key = keyOf(id);
    if (exact.has(key)) return true;
    if (id.type !== 'domain') return false;
    const d = id.value.toLowerCase();
    const bare = d.replace(/^(www|m)\./, '');
    if (bare !== d && exact.has(`domain:${bare}`)) return true;
    return wildcards.some((w) => d.endsWith(`.${w}`));
  };
}
export { matcher as identifierMatcher };

/**
 * Resolve a property list: expand its sources (literal identifiers as given; publisher tags and
 * property ids through the registry when one is deployed), then apply the filters that can be
 * judged: exclude_identifiers always; property_types and channels_any on what the registry knows
 * (a property it does not know is kept and reported in `gaps` under the filter's name).
 * countries_all and feature_requirements need feature data this agent does not hold: not applied.
 */
export async function resolveProperties(
  sources: readonly BasePropertySource[] | null,
  filters: PropertyFilters | null,
  catalog: PublisherCatalogPort | undefined,
): Promise<Resolution> {
  const candidates: Candidate[] = [];
  for (const s of sources ?? []) candidates.push(...(await candidatesOf(s, catalog)));
  const excluded = filters?.exclude_identifiers ? matcher(filters.exclude_identifiers) : () => false;
  const types = filters?.property_types ? new Set<string>(filters.property_types) : null;
  const channels = filters?.channels_any ? new Set<string>(filters.channels_any) : null;
  const out: Resolution = { items: [], keys: [], gaps: {} };
  const seen = new Set<string>();
  for (const c of candidates) {
    // Filters no data could judge for this property (reported for the identifiers it contributes).
    const unjudged: string[] = [];
    if (types) {
      if (!c.known) unjudged.push('property_types');
      else if (!types.has(c.known.property_type)) continue;
    }
    if (channels) {
      if (!c.known || c.known.channels.length === 0) unjudged.push('channels_any');
      else if (!c.known.channels.some((ch) => channels.has(ch))) continue;
    }
    for (const id of c.identifiers) {
      const key = keyOf(id);
      if (seen.has(key) || excluded(id)) continue;
      if (out.items.length >= MAX_RESOLVED) return out;
      seen.add(key);
      const item: Json = { type: id.type, value: id.value };
      out.items.push(item);
      out.keys.push(key);
      for (const name of unjudged) (out.gaps[name] ??= []).push(item);
    }
  }
  return out;
}
