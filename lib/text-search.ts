import { sql } from '../core/sql.ts';
import type { Queryable } from '../core/ports/database.ts';
import { TtlCache } from './cache.ts';

/**
 * Postgres full-text values read back as text (`tsvector::text`, `to_tsquery(...)::text`), and
 * lexemes ordered as Postgres orders them: what an in-memory copy of a catalog needs to rank
 * exactly as the database does (src/backend/utils/adt/tsrank.c).
 */

const WEIGHT_INDEX: Record<string, number> = { A: 3, B: 2, C: 1, D: 0 };

/** One lexeme of a tsvector: its text, and the weight index (D 0 .. A 3) of each stored position, in order. */
export interface VectorLexeme {
  text: string;
  /** Empty for a lexeme stored without positions (a stripped vector). */
  weights: number[];
}

/** One operand of an OR query: a lexeme, matched exactly or as a prefix (`'sport':*`). */
export interface QueryOperand {
  text: string;
  prefix: boolean;
}

/**
 * Compares as Postgres' tsCompareString: bytes of UTF-8 (that is, code points), then length. JS
 * compares UTF-16 units, which orders U+E000..U+FFFF before surrogate pairs; remap those.
 */
export function compareLexemes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return remap(x) - remap(y);
  }
  return a.length - b.length;
}
const remap = (c: number) => (c >= 0xd800 && c <= 0xdfff ? c + 0x2000 : c >= 0xe000 ? c - 0x800 : c);

/** Reads a quoted lexeme at `i` (tsvectorout/tsqueryout double `'` and `\`); returns it and the index after it. */
function quoted(s: string, i: number): [string, number] {
  if (s[i] !== "'") throw new Error(`expected a quoted lexeme at ${i}`);
  let out = '';
  for (i++; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') out += s[++i];
    else if (c === "'") {
      if (s[i + 1] !== "'") return [out, i + 1];
      out += "'";
      i++;
    } else out += c;
  }
  throw new Error('unterminated lexeme');
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** Parses `search::text` (`'lexeme':1A,5B,9 'other'`): lexemes in stored order, each with its positions' weights. */
export function parseTsvector(text: string): VectorLexeme[] {
  const out: VectorLexeme[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === ' ') {
      i++;
      continue;
    }
    const [lexeme, next] = quoted(text, i);
    i = next;
    const weights: number[] = [];
    if (text[i] === ':') {
      i++;
      for (;;) {
        while (isDigit(text[i])) i++;
        const letter = text[i];
        if (letter !== undefined && letter in WEIGHT_INDEX) {
          weights.push(WEIGHT_INDEX[letter]!);
          i++;
        } else weights.push(0);
        if (text[i] !== ',') break;
        i++;
      }
    }
    out.push({ text: lexeme, weights });
  }
  return out;
}

/**
 * The operands of `to_tsquery(...)::text` as written (duplicates included), when the query is a
 * plain OR of lexemes and prefix lexemes; null for any other shape (&, !, <->, weight restrictions).
 */
export function orQueryOperands(text: string): QueryOperand[] | null {
  const operands: QueryOperand[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '|' || c === '(' || c === ')') {
      i++;
      continue;
    }
    if (c !== "'") return null;
    const [lexeme, next] = quoted(text, i);
    i = next;
    let prefix = false;
    if (text[i] === ':') {
      i++;
      while (i < text.length && text[i] !== ' ' && text[i] !== ')') {
        if (text[i] !== '*') return null; // weight restriction
        prefix = true;
        i++;
      }
    }
    operands.push({ text: lexeme, prefix });
  }
  return operands;
}

/**
 * The distinct operands of an OR query in tsrank.c's order (SortAndUniqItems: sorted by lexeme,
 * duplicates dropped). Null when the query is of another shape, or names one lexeme both as
 * prefix and exact (which copy survives depends on qsort).
 */
export function parseOrQuery(text: string): QueryOperand[] | null {
  const operands = orQueryOperands(text);
  if (operands === null) return null;
  operands.sort((a, b) => compareLexemes(a.text, b.text));
  const unique: QueryOperand[] = [];
  for (const o of operands) {
    const last = unique[unique.length - 1];
    if (last && last.text === o.text) {
      if (last.prefix !== o.prefix) return null;
      continue;
    }
    unique.push(o);
  }
  return unique;
}

/** First index of `sorted` (ordered by `cmp`) not below `key`. */
export function lowerBound<T>(sorted: readonly T[], key: T, cmp: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(sorted[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Indexes into `lexemes` (sorted by compareLexemes) of the lexemes `o` matches: the exact one, or
 * every one it prefixes (a contiguous range, as Postgres finds it in a sorted vector).
 */
export function matchingLexemes(lexemes: readonly string[], o: QueryOperand): number[] {
  const from = lowerBound(lexemes, o.text, compareLexemes);
  const out: number[] = [];
  if (!o.prefix) {
    if (lexemes[from] === o.text) out.push(from);
    return out;
  }
  for (let i = from; i < lexemes.length && lexemes[i]!.startsWith(o.text); i++) out.push(i);
  return out;
}

/**
 * Postgres' parse of OR-query texts (`to_tsquery('english', ...)`), read back through `shape`
 * (orQueryOperands or parseOrQuery) and cached per text: the parse depends only on the text search
 * configuration, which does not change while a server runs.
 */
export class TsQueryParses {
  private readonly parsed = new TtlCache<string, QueryOperand[] | null>(2000, 3_600_000);

  constructor(
    private readonly db: Queryable,
    private readonly shape: (text: string) => QueryOperand[] | null,
  ) {}

  /** The operands of `query` as the database parses it, in `shape`'s form; null when not a plain OR query. */
  async operands(query: string): Promise<QueryOperand[] | null> {
    const hit = this.parsed.get(query);
    if (hit !== undefined) return hit;
    const [row] = await this.db.query<{ q: string }>(sql`SELECT to_tsquery('english', ${query}::text)::text AS q`);
    const operands = this.shape(row!.q);
    this.parsed.set(query, operands);
    return operands;
  }
}
