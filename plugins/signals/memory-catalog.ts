import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { Logger } from '../../core/log.ts';
import { CatalogSnapshot } from '../../lib/catalog-snapshot.ts';
import type { Ranking, TextIndex } from '../../lib/text-index.ts';
import { keepBest } from '../../lib/keep-best.ts';
import { SharedValues } from '../../lib/shared-values.ts';
import { StaleReadError } from '../../core/task.ts';
import { CATALOG_CHANNEL, SIGNAL_COLUMNS, type DestinationRow, type SearchFilters, type SearchPage, type SignalRow } from './catalog.ts';
import type { SignalsCursor } from './cursor.ts';
import type { RenderCache } from './render.ts';
import { signalIndex } from './signal-index.ts';

interface Entry {
  row: SignalRow;
  coverage: number;
  coverageKey: string;
  cpm: number | null;
  providerKey: string;
}

/** One instance's copy of the signal catalog, as loaded at `version`, with its text index. Read-only once loaded. */
export interface Catalog {
  version: string;
  entries: Entry[];
  byId: Map<string, number>;
  index: TextIndex<SignalRow>;
  destinations: Map<string, DestinationRow>;
  /** Answer members built from this copy's rows (one agent URL per deployment). */
  rendered: RenderCache;
  /** Per spec, the matching entries in ranking order (orderOf): bounded, rebuilt after a clear. */
  orders: Map<string, Int32Array>;
  /** Entries held in `orders`, over all specs. */
  ordered: number;
}

/** The fields of a signal that no other signal shares. */
const OWN_FIELDS = new Set(['id', 'name', 'description']);

/** Read the version first: data read after it is at least that new, so an equal version later means no write since. */
export async function loadCatalog(db: Queryable): Promise<Catalog> {
  const [v] = await db.query<{ version: string }>(sql`SELECT version::text AS version FROM signal_catalog_version`);
  const rows = await db.query<SignalRow & { coverage_key: string }>(sql`
    SELECT ${SIGNAL_COLUMNS}, coverage_percentage::text AS coverage_key FROM signals`);
  const destinations = await db.query<DestinationRow>(sql`
    SELECT key, type, platform, agent_url, visibility, owner_org::text, allowed_orgs::text[] AS allowed_orgs FROM signal_destinations`);
  // Rows repeat their providers, tags, countries, platforms and prices: one instance of each (fewer cells for the collector to mark).
  const shared = new SharedValues();
  const entries = rows
    .map(({ coverage_key, ...fields }): Entry => {
      const row = shared.fields(fields, OWN_FIELDS);
      return {
        row,
        coverage: Number(coverage_key),
        coverageKey: shared.of(coverage_key),
        cpm: row.cpm === null ? null : Number(row.cpm),
        providerKey: shared.of(row.data_provider.toLowerCase()),
      };
    })
    .sort((a, b) => byId(a.row.id, b.row.id));
  return {
    version: v?.version ?? '',
    entries,
    byId: new Map(entries.map((e, i) => [e.row.id, i])),
    index: signalIndex(entries.map((e) => e.row)),
    destinations: new Map(destinations.map((d) => [d.key, d])),
    rendered: new Map(),
    orders: new Map(),
    ordered: 0,
  };
}

/** Bounds of the ranking orders a copy keeps (as the text index bounds its rankings); past either it starts afresh. */
const MAX_ORDERS = 1000;
const MAX_ORDERED = 200_000;

/**
 * The entries matching `spec`, in ranking order without lookups: text score, coverage, then id
 * (entries are sorted by id, so position). Sorted once per spec and copy, so a page walks from the
 * top and stops when full, whatever the number of matches.
 */
function orderOf(c: Catalog, spec: string, ranking: Ranking): Int32Array {
  let order = c.orders.get(spec);
  if (order) return order;
  order = ranking.positions.slice();
  const rank = new Float64Array(c.entries.length);
  for (let k = 0; k < order.length; k++) rank[order[k]!] = ranking.scores[k]!;
  order.sort((a, b) => rank[b]! - rank[a]! || c.entries[b]!.coverage - c.entries[a]!.coverage || a - b);
  if (c.orders.size >= MAX_ORDERS || c.ordered + order.length > MAX_ORDERED) {
    c.orders.clear();
    c.ordered = 0;
  }
  c.orders.set(spec, order);
  c.ordered += order.length;
  return order;
}

/** Ids are ASCII ([A-Za-z0-9_-]): code unit order is byte order, whatever the database's collation. */
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A signal matching a search, with what orders it. */
interface Candidate {
  entry: Entry;
  anchor: number;
  rank: number;
  coverage: number;
  id: string;
}

type SortKey = Pick<Candidate, 'anchor' | 'rank' | 'coverage' | 'id'>;

/** Looked-up signals first, then text score, coverage, id: a total order (ids are unique), which keyset cursors resume. */
const compare = (a: SortKey, b: SortKey) => b.anchor - a.anchor || b.rank - a.rank || b.coverage - a.coverage || byId(a.id, b.id);

const keyOf = (c: SignalsCursor): SortKey => ({ anchor: c.anchor, rank: c.rank, coverage: Number(c.coverage), id: c.id });

/**
 * The signal catalog in memory (a copy per instance, reloaded on change notifications) and the one
 * ranking of get_signals: its text index scores a spec against each signal's name, tags and
 * description (signal-index.ts).
 */
export class SignalsCatalog {
  readonly snapshot: CatalogSnapshot<Catalog>;

  constructor(private readonly db: DatabasePort) {
    this.snapshot = new CatalogSnapshot(() => loadCatalog(db), db.local);
  }

  /**
   * The copy for a call that must not wait for a load (it runs inside a transaction: on PGlite the
   * load would queue behind it): current, or a StaleReadError whose refresh loads one.
   */
  current(): Catalog {
    const copy = this.snapshot.peek();
    if (copy && this.snapshot.fresh) return copy;
    throw new StaleReadError('the signal catalog copy is being reloaded', () => this.snapshot.get());
  }

  /** A signal visible to the organization (its own or everyone's), from a copy. */
  signal(c: Catalog, id: string, orgId: string): SignalRow | null {
    const i = c.byId.get(id);
    const row = i === undefined ? null : c.entries[i]!.row;
    return row && (row.owner_org === null || row.owner_org === orgId.toLowerCase()) ? row : null;
  }

  /** Reload on every change announcement; `changed` also runs for each (and for a reconnect). */
  async follow(logger: Logger, changed?: () => void): Promise<() => Promise<void>> {
    const [row] = await this.db.query<{ channel: string }>(sql`SELECT ${CATALOG_CHANNEL} AS channel`);
    return this.snapshot.follow(this.db, row!.channel, logger, changed);
  }

  /**
   * One page of the signals visible to the organization that match the spec or are looked up,
   * filtered, in ranking order from after `f.after`, and whether more follow.
   */
  search(c: Catalog, f: SearchFilters): SearchPage {
    const ranking = f.spec ? c.index.rank(f.spec) : null;
    const orgId = f.orgId.toLowerCase();
    const anchored = new Set<number>();
    for (const l of f.lookups ?? []) {
      const i = c.byId.get(l.id);
      if (i !== undefined && (!l.domain || l.domain === c.entries[i]!.row.data_provider_domain)) anchored.add(i);
    }
    const types = f.catalogTypes?.length ? new Set(f.catalogTypes) : null;
    const providers = f.dataProviders?.length ? new Set(f.dataProviders.map((p) => p.toLowerCase())) : null;
    const countries = f.countries?.length ? new Set(f.countries) : null;
    const platforms = f.platforms?.length ? new Set(f.platforms) : null;
    const after = f.after ? keyOf(f.after) : null;
    // Only the page (and one more, to tell whether more follow) is kept, in order. Looked-up
    // signals rank first; the others are walked in their spec's ranking order (orderOf), so the
    // walk stops once the page is full: a broad spec matching 100k signals reads a page's worth.
    const keep = f.limit + 1;
    const best: Candidate[] = [];
    let matches = 0;
    const consider = (i: number) => {
      const e = c.entries[i]!;
      const r = e.row;
      if (r.owner_org !== null && r.owner_org !== orgId) return;
      if (types && !types.has(r.signal_type)) return;
      if (providers && !providers.has(e.providerKey)) return;
      // No incremental cost (owned) passes any CPM ceiling.
      if (f.maxCpm !== undefined && e.cpm !== null && !(e.cpm <= f.maxCpm)) return;
      if (f.minCoverage !== undefined && !(e.coverage >= f.minCoverage)) return;
      if (countries && r.countries.length && !r.countries.some((x) => countries.has(x))) return;
      if (platforms && !r.platforms.some((p) => platforms.has(p.platform))) return;
      const candidate = { entry: e, anchor: anchored.has(i) ? 1 : 0, rank: ranking?.scoreOf(i) ?? 0, coverage: e.coverage, id: r.id };
      if (after && compare(candidate, after) <= 0) return;
      matches++;
      keepBest(best, candidate, keep, compare);
    };
    for (const i of anchored) consider(i);
    if (f.spec && ranking?.size) {
      for (const i of orderOf(c, f.spec, ranking)) {
        if (best.length === keep) break;
        if (!anchored.has(i)) consider(i);
      }
    }
    const page = best.slice(0, f.limit);
    return {
      rows: page.map((p) => p.entry.row),
      keys: page.map(({ entry, anchor, rank }) => ({ anchor, rank, coverage: entry.coverageKey, id: entry.row.id })),
      hasMore: matches > f.limit,
    };
  }
}
