import SearchableMap from 'minisearch/SearchableMap';
import stem from 'wink-porter2-stemmer';
import { eng } from 'stopword';
import { memoized } from './memoized.ts';

/**
 * Full-text ranking of a catalog held in memory: MiniSearch's ranking (BM25 with per-field boosts,
 * prefix and fuzzy matches) over English words, stop words dropped and the rest stemmed (Porter2,
 * the Snowball English stemmer Postgres uses too), so `streaming` finds `streams` and `shoppers`
 * finds `shopper`, while `news` stays apart from `new`. Built once per catalog copy and never
 * changed: a change of the catalog builds a new index with the new copy.
 *
 * The postings are typed arrays rather than MiniSearch's index (a Map per term and field, an array
 * per document): at 100k entries that index was ~200 MB and millions of cells, which every full
 * garbage collection marks, and those collections made answers from a large catalog slower than
 * from a small one. Only the vocabulary is MiniSearch's (its radix tree: prefix and fuzzy lookups),
 * and scores are computed as MiniSearch computes them, operation for operation, so rankings are
 * the same to the last bit (test/lib/text-index.test.ts compares them).
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
 * Memoized (100k words): a catalog repeats its vocabulary in every entry, and stemming each
 * occurrence was most of the time an index build took (100k entries: ~70% of it).
 */
export const termOf = memoized(100_000, (word): string | null => {
  const w = word.toLowerCase();
  return w.length < 2 || STOP_WORDS.has(w) || NUMBER.test(w) ? null : stem(w);
});

const tokenize = (text: string) => text.match(WORD) ?? [];

/**
 * How a query term matches: exactly, and as a prefix once it has 4+ letters (`auto` finds
 * `automotive`); a longer one also within one edit per 5 letters (`recipies` finds `recipes`).
 * Prefix and fuzzy matches score below exact ones, less the further they are (MiniSearch's weights).
 */
const prefixOf = (term: string) => term.length >= 4;
const maxEditsOf = (term: string) => (term.length >= 6 ? Math.min(6, Math.round(term.length * 0.2)) : 0);
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;

/** MiniSearch's BM25+ parameters: term frequency saturation, length normalization, and the floor of a match. */
const K = 1.2;
const B = 0.7;
const D = 0.5;

/** Most occurrences of a term in one field counted (a frequency is two bytes; real fields are far below it). */
const MAX_FREQUENCY = 0xffff;

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

const NO_MATCH = new Ranking(new Int32Array(0), new Float64Array(0));

/**
 * One field's postings: for term t, entries docs[start[t]] .. docs[start[t + 1] - 1] (ascending)
 * hold it, freqs[k] times each; lengths[entry] is the field's number of distinct words (MiniSearch's
 * field length: words before stop words are dropped), average their running mean as MiniSearch keeps it.
 */
interface Postings {
  boost: number;
  start: Uint32Array;
  docs: Int32Array;
  freqs: Uint16Array;
  lengths: Uint32Array;
  average: number;
}

/**
 * The index of one catalog copy: documents are the copy's entries, named by their position. The
 * copy never changes, so a query's ranking stays exact while the index lives: the same few specs
 * and briefs are asked again and again, and each is ranked once.
 */
export class TextIndex<D> {
  /** Term -> its number. */
  private readonly vocabulary = new SearchableMap<number>();
  private readonly fields: Postings[];
  private readonly count: number;
  private readonly rankings = new Map<string, Ranking>();
  private scores = 0;

  /** `entry(position)` for each position below `count`: each is read once. */
  constructor(count: number, entry: (position: number) => D, fields: readonly TextField<D>[]) {
    const n = count;
    this.count = n;
    // Each entry's terms per field, in order, as numbers (terms numbered as first met, the order
    // MiniSearch adds them to its tree in, so prefix and fuzzy lookups list them in its order).
    // A catalog repeats its words: each distinct word is looked up once (its term's number, or -1:
    // not indexed), and counted once per field by the field it was last seen in.
    const words = new Map<string, number>();
    const termOfWord: number[] = [];
    const lastSeen: number[] = [];
    let terms = 0;
    const next = () => terms++;
    let stream = new Int32Array(1 << 16);
    let used = 0;
    const ends = new Uint32Array(n * fields.length);
    const lengths = fields.map(() => new Uint32Array(n));
    const averages = fields.map(() => 0);
    for (let d = 0; d < n; d++) {
      const doc = entry(d);
      for (let f = 0; f < fields.length; f++) {
        const slice = d * fields.length + f;
        let length = 0;
        for (const word of tokenize(fields[f]!.text(doc))) {
          let w = words.get(word);
          if (w === undefined) {
            const term = termOf(word);
            w = termOfWord.push(term ? this.vocabulary.fetch(term, next) : -1) - 1;
            lastSeen.push(-1);
            words.set(word, w);
          }
          if (lastSeen[w] !== slice) {
            lastSeen[w] = slice;
            length++;
          }
          const number = termOfWord[w]!;
          if (number < 0) continue;
          if (used === stream.length) {
            const grown = new Int32Array(stream.length * 2);
            grown.set(stream);
            stream = grown;
          }
          stream[used++] = number;
        }
        lengths[f]![d] = length;
        averages[f] = (averages[f]! * d + length) / (d + 1);
        ends[slice] = used;
      }
    }
    // Per field, how many entries hold each term, then the postings in entry order.
    const mark = new Int32Array(terms);
    const slot = new Uint32Array(terms);
    this.fields = fields.map((field, f) => {
      const start = new Uint32Array(terms + 1);
      mark.fill(-1);
      const each = (visit: (term: number, d: number) => void) => {
        for (let d = 0; d < n; d++) {
          const slice = d * fields.length + f;
          for (let k = slice === 0 ? 0 : ends[slice - 1]!; k < ends[slice]!; k++) visit(stream[k]!, d);
        }
      };
      each((t, d) => {
        if (mark[t] === d) return;
        mark[t] = d;
        start[t + 1]!++;
      });
      for (let t = 0; t < terms; t++) start[t + 1]! += start[t]!;
      const docs = new Int32Array(start[terms]!);
      const freqs = new Uint16Array(start[terms]!);
      const fill = start.slice(0, terms);
      mark.fill(-1);
      each((t, d) => {
        if (mark[t] === d) {
          if (freqs[slot[t]!]! < MAX_FREQUENCY) freqs[slot[t]!]!++;
          return;
        }
        mark[t] = d;
        const k = fill[t]!++;
        slot[t] = k;
        docs[k] = d;
        freqs[k] = 1;
      });
      return { boost: field.boost, start, docs, freqs, lengths: lengths[f]!, average: averages[f]! };
    });
  }

  /** The entries matching a word of the query, best first; none when the query has no word to look up. */
  rank(query: string): Ranking {
    let ranking = this.rankings.get(query);
    if (ranking) return ranking;
    ranking = this.score(tokenize(query).slice(0, MAX_QUERY_WORDS));
    if (this.rankings.size >= MAX_RANKINGS || this.scores + ranking.size > MAX_SCORES) {
      this.rankings.clear(); // bounded; a miss only costs ranking again
      this.scores = 0;
    }
    this.rankings.set(query, ranking);
    this.scores += ranking.size;
    return ranking;
  }

  /**
   * MiniSearch's OR query: per query term, the sum over its matches (itself, then longer terms it
   * prefixes, then terms within its edits) and fields of weight x boost x BM25+, each entry's sums
   * added term after term, times the number of distinct query terms the entry matches. Additions
   * are made in MiniSearch's order: floating-point sums depend on it.
   */
  private score(words: string[]): Ranking {
    const terms = words.map(termOf).filter((t): t is string => !!t);
    if (!terms.length) return NO_MATCH;
    const total = new Float64Array(this.count);
    const part = new Float64Array(this.count);
    const quality = new Uint8Array(this.count);
    const matched: number[] = [];
    const touched: number[] = [];
    const add = (term: number, weight: number) => {
      for (const p of this.fields) {
        const from = p.start[term]!;
        const to = p.start[term + 1]!;
        if (from === to) continue;
        const idf = Math.log(1 + (this.count - (to - from) + 0.5) / (to - from + 0.5));
        for (let k = from; k < to; k++) {
          const d = p.docs[k]!;
          const tf = p.freqs[k]!;
          const bm25 = idf * (D + (tf * (K + 1)) / (tf + K * (1 - B + (B * p.lengths[d]!) / p.average)));
          if (part[d] === 0) touched.push(d);
          part[d]! += weight * p.boost * bm25;
        }
      }
    };
    terms.forEach((term, j) => {
      const exact = this.vocabulary.get(term);
      if (exact !== undefined) add(exact, 1);
      const edits = maxEditsOf(term);
      const fuzzy = edits ? this.vocabulary.fuzzyGet(term, edits) : undefined;
      if (prefixOf(term)) {
        for (const [longer, id] of this.vocabulary.atPrefix(term)) {
          const distance = longer.length - term.length;
          if (!distance) continue;
          fuzzy?.delete(longer); // scored as a prefix match only
          add(id, (PREFIX_WEIGHT * longer.length) / (longer.length + 0.3 * distance));
        }
      }
      for (const [near, [id, distance]] of fuzzy ?? []) {
        if (distance) add(id, (FUZZY_WEIGHT * near.length) / (near.length + distance));
      }
      // A repeated query term adds its scores again but counts once among the terms matched.
      const first = terms.indexOf(term) === j;
      for (const d of touched) {
        total[d]! += part[d]!;
        part[d] = 0;
        if (!first) continue;
        if (quality[d] === 0) matched.push(d);
        quality[d]!++;
      }
      touched.length = 0;
    });
    const positions = Int32Array.from(matched);
    for (const d of matched) total[d]! *= quality[d]!;
    positions.sort((a, b) => total[b]! - total[a]! || a - b);
    const scores = new Float64Array(positions.length);
    for (let k = 0; k < positions.length; k++) scores[k] = total[positions[k]!]!;
    return new Ranking(positions, scores);
  }
}
