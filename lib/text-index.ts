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
 * The index of one catalog copy: documents are the copy's entries, named by their position. The
 * copy never changes, so a query's ranking stays exact while the index lives: the same few specs
 * and briefs are asked again and again, and each is ranked once.
 */
export class TextIndex<D> {
  private readonly search: MiniSearch<Doc>;
  private readonly rankings = new Map<string, Map<number, number>>();
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

  /** Score of every entry matching a word of the query (by position); empty when the query has no word to look up. Read-only. */
  rank(query: string): ReadonlyMap<number, number> {
    let scores = this.rankings.get(query);
    if (scores) return scores;
    scores = new Map();
    const words = tokenize(query).slice(0, MAX_QUERY_WORDS).join(' ');
    if (words) for (const hit of this.search.search(words)) scores.set(hit.id as number, hit.score);
    if (this.rankings.size >= MAX_RANKINGS || this.scores + scores.size > MAX_SCORES) {
      this.rankings.clear(); // bounded; a miss only costs ranking again
      this.scores = 0;
    }
    this.rankings.set(query, scores);
    this.scores += scores.size;
    return scores;
  }
}
