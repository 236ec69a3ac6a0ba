import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { Logger } from '../../core/log.ts';
import { CatalogSnapshot } from '../../lib/catalog-snapshot.ts';
import type { Ranking, TextIndex } from '../../lib/text-index.ts';
import { keepBest } from '../../lib/keep-best.ts';
import { CompactRows, valueAt, type Column, type RawRow } from '../../lib/compact-rows.ts';
import { StaleReadError } from '../../core/task.ts';
import { CATALOG_CHANNEL, type DestinationRow, type SearchFilters, type SearchPage, type SignalRow } from './catalog.ts';
import type { SignalsCursor } from './cursor.ts';
import { signalIndex } from './signal-index.ts';

/** One instance's copy of the signal catalog, as loaded at `version`, with its text index. Read-only once loaded. */
export interface Catalog {
  version: string;
  /** The signals, sorted by id: a signal's position here is its entry in the index. */
  signals: CompactRows<SignalRow>;
  coverage: Float64Array;
  /** NaN: no incremental cost. */
  cpm: Float64Array;
  /** The data provider of each distinct `data_provider` value, lowercase (what the filter compares). */
  providers: Column<string>;
  index: TextIndex<SignalRow>;
  destinations: Map<string, DestinationRow>;
  /** Per spec, the matching entries in ranking order (orderOf): bounded, rebuilt after a clear. */
  orders: Map<string, Int32Array>;
  /** Entries held in `orders`, over all specs. */
  ordered: number;
  /** Rows answers named, rebuilt once per copy (shared: read-only) and bounded (rowAt). */
  rows: Map<number, SignalRow>;
}

/** The text fields of a signal: no other signal shares them. */
const TEXTS = ['id', 'name', 'description'] as const;
/** The fields read as JSON text; coverage is read as its numeric text (the exact key a get_signals cursor holds). */
const JSON_FIELDS = ['tags', 'countries', 'platforms', 'agents', 'pricing_options', 'categories', 'value_range'] as const;
type Raw = RawRow<SignalRow, (typeof JSON_FIELDS)[number]>;

/** Read the version first: data read after it is at least that new, so an equal version later means no write since. */
export async function loadCatalog(db: Queryable): Promise<Catalog> {
  const [v] = await db.query<{ version: string }>(sql`SELECT version::text AS version FROM signal_catalog_version`);
  const rows = await db.query<Raw>(sql`
    SELECT id, name, description, signal_type, data_provider, data_provider_domain, coverage_percentage::text AS coverage_percentage, cpm,
      currency, to_jsonb(tags)::text AS tags, to_jsonb(countries)::text AS countries, owner_org::text, platforms::text AS platforms,
      agents::text AS agents, pricing_options::text AS pricing_options, value_type, categories::text AS categories,
      value_range::text AS value_range
    FROM signals`);
  const destinations = await db.query<DestinationRow>(sql`
    SELECT key, type, platform, agent_url, visibility, owner_org::text, allowed_orgs::text[] AS allowed_orgs FROM signal_destinations`);
  rows.sort((a, b) => byId(a.id, b.id));
  const signals = new CompactRows<SignalRow, (typeof JSON_FIELDS)[number]>(rows, { texts: TEXTS, unique: ['id'], json: JSON_FIELDS });
  const providers = signals.column('data_provider');
  const tags = signals.column('tags');
  return {
    version: v?.version ?? '',
    signals,
    coverage: Float64Array.from(rows, (r) => Number(r.coverage_percentage)),
    cpm: Float64Array.from(rows, (r) => (r.cpm === null ? Number.NaN : Number(r.cpm))),
    providers: { codes: providers.codes, values: providers.values.map((p) => p.toLowerCase()) },
    index: signalIndex(rows.length, (i) => ({ name: rows[i]!.name, tags: valueAt(tags, i), description: rows[i]!.description })),
    destinations: new Map(destinations.map((d) => [d.key, d])),
    orders: new Map(),
    ordered: 0,
    rows: new Map(),
  };
}

/** Most rows a copy keeps rebuilt; past it the oldest rebuilt goes first (the copy stays compact, lib/compact-rows.ts). */
const MAX_ROWS = 4096;

/** The row at `position` of a copy, rebuilt once (shared by the answers naming it: read-only). */
function rowAt(c: Catalog, position: number): SignalRow {
  let row = c.rows.get(position);
  if (row === undefined) {
    if (c.rows.size >= MAX_ROWS) c.rows.delete(c.rows.keys().next().value!);
    row = c.signals.row(position);
    c.rows.set(position, row);
  }
  return row;
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
  const rank = new Float64Array(c.signals.size);
  for (let k = 0; k < order.length; k++) rank[order[k]!] = ranking.scores[k]!;
  order.sort((a, b) => rank[b]! - rank[a]! || c.coverage[b]! - c.coverage[a]! || a - b);
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

/** A signal matching a search (its position), with what orders it. */
interface Candidate {
  position: number;
  anchor: number;
  rank: number;
  coverage: number;
}

interface SortKey {
  anchor: number;
  rank: number;
  coverage: number;
  id: string;
}

/**
 * Looked-up signals first, then text score, coverage, id: a total order (ids are unique), which
 * keyset cursors resume. Candidates of one copy break ties by position, which is id order (the copy
 * is sorted by id): no id is decoded to rank them.
 */
const compare = (a: Candidate, b: Candidate) => b.anchor - a.anchor || b.rank - a.rank || b.coverage - a.coverage || a.position - b.position;

/** A candidate against a cursor's key (its signal may be in no copy); the id is read on a tie only. */
const compareAfter = (c: Catalog, a: Candidate, b: SortKey) =>
  b.anchor - a.anchor || b.rank - a.rank || b.coverage - a.coverage || byId(c.signals.text(a.position, 'id'), b.id);

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
    const i = c.signals.find('id', id);
    const row = i === undefined ? null : rowAt(c, i);
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
    const domain = c.signals.column('data_provider_domain');
    for (const l of f.lookups ?? []) {
      const i = c.signals.find('id', l.id);
      if (i !== undefined && (!l.domain || l.domain === valueAt(domain, i))) anchored.add(i);
    }
    const types = f.catalogTypes?.length ? new Set(f.catalogTypes) : null;
    const providers = f.dataProviders?.length ? new Set(f.dataProviders.map((p) => p.toLowerCase())) : null;
    const countries = f.countries?.length ? new Set(f.countries) : null;
    const platforms = f.platforms?.length ? new Set(f.platforms) : null;
    const after = f.after ? keyOf(f.after) : null;
    const owner = c.signals.column('owner_org');
    const type = c.signals.column('signal_type');
    const country = c.signals.column('countries');
    const platform = c.signals.column('platforms');
    // Only the page (and one more, to tell whether more follow) is kept, in order. Looked-up
    // signals rank first; the others are walked in their spec's ranking order (orderOf), so the
    // walk stops once the page is full: a broad spec matching 100k signals reads a page's worth.
    const keep = f.limit + 1;
    const best: Candidate[] = [];
    let matches = 0;
    const consider = (i: number) => {
      const ownerOrg = valueAt(owner, i);
      if (ownerOrg !== null && ownerOrg !== orgId) return;
      if (types && !types.has(valueAt(type, i))) return;
      if (providers && !providers.has(valueAt(c.providers, i))) return;
      // No incremental cost (owned) passes any CPM ceiling.
      if (f.maxCpm !== undefined && !Number.isNaN(c.cpm[i]) && !(c.cpm[i]! <= f.maxCpm)) return;
      if (f.minCoverage !== undefined && !(c.coverage[i]! >= f.minCoverage)) return;
      const where = valueAt(country, i);
      if (countries && where.length && !where.some((x) => countries.has(x))) return;
      if (platforms && !valueAt(platform, i).some((p) => platforms.has(p.platform))) return;
      const candidate = { position: i, anchor: anchored.has(i) ? 1 : 0, rank: ranking?.scoreOf(i) ?? 0, coverage: c.coverage[i]! };
      if (after && compareAfter(c, candidate, after) <= 0) return;
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
    const rows = best.slice(0, f.limit).map((p) => rowAt(c, p.position));
    return {
      rows,
      keys: best.slice(0, f.limit).map(({ anchor, rank }, k) => ({ anchor, rank, coverage: String(rows[k]!.coverage_percentage), id: rows[k]!.id })),
      hasMore: matches > f.limit,
    };
  }
}
