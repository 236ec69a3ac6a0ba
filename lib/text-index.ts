import MiniSearch from 'minisearch';
import stem from 'wink-porter2-stemmer';
import { eng } from 'stopword';

/**
 * Full-text ranking of a catalog held in memory: MiniSearch (BM25 with per-field boosts) over
 * English words, stop words dropped and the rest stemmed (Porter2, the Snowball English stemmer
 * Postgres uses too), so `streaming` finds `streams` and `shoppers` finds `shopper`, while `news`
 * stays apart from `new`. Built once per catalog copy and never changed: a change of the
 * catalog builds a new index with the new copy.
 */

/** A searchable field of a catalog entry, and how much more a match there counts than a boost of 1. */
export interface TextField<D> {
  name: string;
  boost: number;
  text(doc: D): string;
}

const STOP_WORDS = new Set(eng);
const WORD = /[\p{L}\p{N}]+/gu;

/** Longest query read: a brief pasted whole ranks by its first words. */
const MAX_QUERY_WORDS = 32;
/** Bounds of the rankings an index keeps (queries, and scores over all of them); past either it starts afresh. */
const MAX_RANKINGS = 1000;
const MAX_SCORES = 200_000;

const NUMBER = /^\p{N}+$/u;

/**
 * A word as the index keys it (null: not indexed): lowercase, stemmed; no stop words, single
 * letters or bare numbers (a brief's numbers are budgets, dates and ages: `adults 25-54` must not
 * outrank what the brief asks for on `25` and `54`; `300x250` or `4k` are words and stay).
 */
function termOf(word: string): string | null {
  let term = TERMS.get(word);
  if (term !== undefined) return term;
  const w = word.toLowerCase();
  term = w.length < 2 || STOP_WORDS.has(w) || NUMBER.test(w) ? null : stem(w);
  if (TERMS.size >= MAX_TERMS) TERMS.clear();
  TERMS.set(word, term);
  return term;
}

/**
 * Words already turned into terms: a catalog repeats its vocabulary in every entry, and stemming
 * each occurrence was most of the time an index build took (100k entries: ~70% of it). Bounded.
 */
const TERMS = new Map<string, string | null>();
const MAX_TERMS = 100_000;

const tokenize = (text: string) => text.match(WORD) ?? [];

/**
 * How a query term matches: exactly, and as a prefix once it has 4+ letters (`auto` finds
 * `automotive`); a longer one also within one edit per 5 letters (`recipies` finds `recipes`).
 * MiniSearch scores prefix and fuzzy matches below exact ones.
 */
const SEARCH = {
  combineWith: 'OR',
  prefix: (term: string) => term.length >= 4,
  fuzzy: (term: string) => (term.length >= 6 ? 0.2 : false),
} as const;

interface Doc {
  i: number;
}

/**
 * The entries matching a query, best first: by score, then by position (the catalog's own order
 * breaks ties), so a search walks from the top and stops once its page is full. Read-only.
 */
export class Ranking {
  private byPosition: Map<number, number> | null = null;

  constructor(
    /** Positions of the matching entries, best first. */
    readonly positions: Int32Array,
    /** Their scores, in the same order. */
    readonly scores: Float64Array,
  ) {}

  get size(): number {
    return this.positions.length;
  }

  /** Score of the entry at `position`; undefined when it does not match (a lookup map, built on first use). */
  scoreOf(position: number): number | undefined {
    if (!this.byPosition) {
      this.byPosition = new Map();
      for (let k = 0; k < this.positions.length; k++) this.byPosition.set(this.positions[k]!, this.scores[k]!);
    }
    return this.byPosition.get(position);
  }
}

/** MiniSearch's hits (sorted by score; equal scores in no defined order) as a Ranking: equal scores by position. */
function rankingOf(hits: ReadonlyArray<{ id: unknown; score: number }>): Ranking {
  const positions = new Int32Array(hits.length);
  const scores = new Float64Array(hits.length);
  for (let k = 0; k < hits.length; k++) {
    positions[k] = hits[k]!.id as number;
    scores[k] = hits[k]!.score;
  }
  // Already sorted by score: only runs of equal scores are put in position order (Int32Array sorts numerically).
  for (let a = 0; a < hits.length; ) {
    let b = a + 1;
    while (b < hits.length && scores[b] === scores[a]) b++;
    if (b - a > 1) positions.subarray(a, b).sort();
    a = b;
  }
  return new Ranking(positions, scores);
}

const NO_MATCH = new Ranking(new Int32Array(0), new Float64Array(0));

/**
 * The index of one catalog copy: documents are the copy's entries, named by their position. The
 * copy never changes, so a query's ranking stays exact while the index lives: the same few specs
 * and briefs are asked again and again, and each is ranked once.
 */
export class TextIndex<D> {
  private readonly search: MiniSearch<Doc>;
  private readonly rankings = new Map<string, Ranking>();
  private scores = 0;

  constructor(docs: readonly D[], fields: readonly TextField<D>[]) {
    const byName = new Map(fields.map((f) => [f.name, f]));
    this.search = new MiniSearch<Doc>({
      idField: 'i',
      fields: fields.map((f) => f.name),
      extractField: (doc, field) => (field === 'i' ? doc.i : byName.get(field)!.text(docs[doc.i]!)) as string,
      tokenize,
      processTerm: termOf,
      searchOptions: { ...SEARCH, boost: Object.fromEntries(fields.map((f) => [f.name, f.boost])) },
    });
    this.search.addAll(docs.map((_, i) => ({ i })));
  }

  /** The entries matching a word of the query, best first; none when the query has no word to look up. */
  rank(query: string): Ranking {
    let ranking = this.rankings.get(query);
    if (ranking) return ranking;
    const words = tokenize(query).slice(0, MAX_QUERY_WORDS).join(' ');
    ranking = words ? rankingOf(this.search.search(words)) : NO_MATCH;
    if (this.rankings.size >= MAX_RANKINGS || this.scores + ranking.size > MAX_SCORES) {
      this.rankings.clear(); // bounded; a miss only costs ranking again
      this.scores = 0;
    }
    this.rankings.set(query, ranking);
    this.scores += ranking.size;
    return ranking;
  }
}
