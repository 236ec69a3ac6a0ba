import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { Logger } from '../../core/log.ts';
import { CatalogSnapshot } from '../../lib/catalog-snapshot.ts';
import { StaleReadError } from '../../core/task.ts';
import { CATALOG_CHANNEL, SIGNAL_COLUMNS, specQuery, type DestinationRow, type SearchFilters, type SearchPage, type SignalRow } from './catalog.ts';
import type { RenderCache } from './render.ts';
import { compareLexemes, lowerBound, parseOrQuery, parseTsvector, TsQueryParses, type QueryOperand } from '../../lib/text-search.ts';
import { addTerm, finishRank, lexemeTerm } from './ts-rank.ts';

interface Entry {
  row: SignalRow;
  /** Position in `ORDER BY id` (the database's collation orders ids, not JS). */
  order: number;
  coverage: number;
  coverageKey: string;
  cpm: number | null;
  /** `lower(data_provider)` as the database computes it. */
  providerKey: string;
  platformNames: string[];
}

interface Posting {
  entry: number;
  /** lexemeTerm of the lexeme's positions in this signal. */
  term: number;
}

export interface Catalog {
  version: string;
  entries: Entry[];
  byId: Map<string, number>;
  /** Lexeme -> signals holding it; `lexemes` sorted as Postgres sorts them, for prefix ranges. */
  postings: Map<string, Posting[]>;
  lexemes: string[];
  destinations: Map<string, DestinationRow>;
  /** Answer members built from this copy's rows (one agent URL per deployment). */
  rendered: RenderCache;
}

/** Read the version first: data read after it is at least that new, so an equal version later means no write since. */
export async function loadCatalog(db: Queryable): Promise<Catalog> {
  const [v] = await db.query<{ version: string }>(sql`SELECT version::text AS version FROM signal_catalog_version`);
  const rows = await db.query<SignalRow & { coverage_key: string; provider_key: string; platform_names: string[]; search_text: string }>(sql`
    SELECT ${SIGNAL_COLUMNS}, coverage_percentage::text AS coverage_key, lower(data_provider) AS provider_key, platform_names,
           search::text AS search_text
    FROM signals ORDER BY id`);
  const destinations = await db.query<DestinationRow>(sql`
    SELECT key, type, platform, agent_url, visibility, owner_org::text, allowed_orgs::text[] AS allowed_orgs FROM signal_destinations`);
  const postings = new Map<string, Posting[]>();
  const entries = rows.map(({ coverage_key, provider_key, platform_names, search_text, ...row }, i): Entry => {
    for (const lexeme of parseTsvector(search_text)) {
      let list = postings.get(lexeme.text);
      if (!list) postings.set(lexeme.text, (list = []));
      list.push({ entry: i, term: lexemeTerm(lexeme.weights) });
    }
    return {
      row,
      order: i,
      coverage: Number(coverage_key),
      coverageKey: coverage_key,
      cpm: row.cpm === null ? null : Number(row.cpm),
      providerKey: provider_key,
      platformNames: platform_names,
    };
  });
  return {
    version: v?.version ?? '',
    entries,
    byId: new Map(entries.map((e, i) => [e.row.id, i])),
    postings,
    lexemes: [...postings.keys()].sort(compareLexemes),
    destinations: new Map(destinations.map((d) => [d.key, d])),
    rendered: new Map(),
  };
}

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A signal matching a search, with what orders it. */
interface Candidate {
  entry: Entry;
  anchor: number;
  rank: number;
  coverage: number;
  order: number;
}

type SortKey = Pick<Candidate, 'anchor' | 'rank' | 'coverage' | 'order'>;

/** ORDER BY anchor DESC, rank DESC, coverage_percentage DESC, id (a total order: `order` is unique). */
const compare = (a: SortKey, b: SortKey) =>
  b.anchor - a.anchor || (a.rank === b.rank ? 0 : a.rank > b.rank ? -1 : 1) || b.coverage - a.coverage || a.order - b.order;

/** Insert `c` into `best` (sorted by compare, at most `keep` long) when it ranks among the first `keep`. */
function keepBest(best: Candidate[], c: Candidate, keep: number): void {
  if (best.length === keep && compare(c, best[keep - 1]!) >= 0) return;
  best.splice(lowerBound(best, c, compare), 0, c);
  if (best.length > keep) best.pop();
}

/**
 * The signal catalog in memory (a snapshot per instance, reloaded on change notifications), with
 * searchSignalsSql's ranking reproduced exactly. `search` returns null for what it does not
 * reproduce (a query that is not a plain OR of lexemes, an organization id that is not a
 * canonical UUID, a cursor naming an unknown signal): the caller then asks the database.
 */
export class SignalsCatalog {
  readonly snapshot: CatalogSnapshot<Catalog>;
  private readonly parses: TsQueryParses;

  constructor(private readonly db: DatabasePort) {
    this.snapshot = new CatalogSnapshot(() => loadCatalog(db));
    this.parses = new TsQueryParses(db, parseOrQuery);
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

  /** The distinct operands of the spec's query as the database parses it; null when not an OR query. */
  operands(query: string): Promise<QueryOperand[] | null> {
    return this.parses.operands(query);
  }

  /** One page as searchSignalsSql ranks it (activations aside), or null when the database must answer. */
  search(c: Catalog, f: SearchFilters, operands: QueryOperand[] | null): SearchPage | null {
    if (operands === null || !CANONICAL_UUID.test(f.orgId)) return null;
    const lookups = f.lookups ?? [];
    const ranks = new Map<number, number>();
    // calc_rank_or: operands in sorted order, each one's matching lexemes in sorted order.
    for (const o of operands) {
      const from = o.prefix ? lowerBound(c.lexemes, o.text, compareLexemes) : -1;
      const matching = o.prefix ? [] : c.postings.has(o.text) ? [o.text] : [];
      if (o.prefix) for (let i = from; i < c.lexemes.length && c.lexemes[i]!.startsWith(o.text); i++) matching.push(c.lexemes[i]!);
      for (const lexeme of matching) {
        for (const p of c.postings.get(lexeme)!) ranks.set(p.entry, addTerm(ranks.get(p.entry) ?? 0, p.term));
      }
    }
    const anchored = new Set<number>();
    for (const l of lookups) {
      const i = c.byId.get(l.id);
      if (i !== undefined && (!l.domain || l.domain === c.entries[i]!.row.data_provider_domain)) anchored.add(i);
    }
    const types = f.catalogTypes?.length ? new Set(f.catalogTypes) : null;
    const providers = f.dataProviders?.length ? new Set(f.dataProviders.map((p) => p.toLowerCase())) : null;
    const countries = f.countries?.length ? new Set(f.countries) : null;
    const platforms = f.platforms?.length ? new Set(f.platforms) : null;
    let after: SortKey | null = null;
    if (f.after) {
      const i = c.byId.get(f.after.id);
      if (i === undefined) return null;
      after = { anchor: f.after.anchor, rank: f.after.rank, coverage: Number(f.after.coverage), order: i };
    }
    // Only the page (and one more, to tell whether more follow) is kept, in order: a broad spec
    // matching thousands of signals costs no sort of them all.
    const keep = f.limit + 1;
    const best: Candidate[] = [];
    let matches = 0;
    const consider = (i: number) => {
      const e = c.entries[i]!;
      const r = e.row;
      if (r.owner_org !== null && r.owner_org !== f.orgId) return;
      if (types && !types.has(r.signal_type)) return;
      if (providers && !providers.has(e.providerKey)) return;
      if (f.maxCpm !== undefined && e.cpm !== null && !(e.cpm <= f.maxCpm)) return;
      if (f.minCoverage !== undefined && !(e.coverage >= f.minCoverage)) return;
      if (countries && r.countries.length && !r.countries.some((x) => countries.has(x))) return;
      if (platforms && !e.platformNames.some((x) => platforms.has(x))) return;
      const candidate = {
        entry: e,
        anchor: anchored.has(i) ? 1 : 0,
        rank: finishRank(ranks.get(i) ?? 0, operands.length),
        coverage: e.coverage,
        order: e.order,
      };
      if (after && compare(candidate, after) <= 0) return;
      matches++;
      keepBest(best, candidate, keep);
    };
    for (const i of ranks.keys()) consider(i);
    for (const i of anchored) if (!ranks.has(i)) consider(i);
    const page = best.slice(0, f.limit);
    return {
      rows: page.map((p) => p.entry.row),
      keys: page.map(({ entry, anchor, rank }) => ({ anchor, rank, coverage: entry.coverageKey, id: entry.row.id })),
      hasMore: matches > f.limit,
    };
  }
}

/** The spec's query text as searchSignalsSql builds it ('' when the spec has no usable word). */
export const queryOf = (f: SearchFilters) => (f.spec ? specQuery(f.spec) : '');
