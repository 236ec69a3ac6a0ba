/**
 * Postgres' `ts_rank(tsvector, tsquery)` (default weights, no normalization) for OR queries of
 * plain and prefix lexemes, computed exactly as src/backend/utils/adt/tsrank.c does:
 * calc_rank_or sums, per distinct query operand in sorted order and per matching lexeme in the
 * vector's order, (wjm + resj - wjm/(jm+1)^2) / 1.64493406685 where resj = sum w(pos_j)/(j+1)^2
 * over the lexeme's positions and wjm is its largest weight (first such position), then divides
 * by the number of distinct operands. C evaluates in float4 except the division by the double
 * constant and the addition to the running sum, which are double and rounded back to float4:
 * every step here is rounded the same way with Math.fround.
 * Other query shapes (AND, phrase, NOT, weight restrictions) are reported as unsupported and
 * ranked by the database instead.
 */

const f = Math.fround;
/** Default weights by weight index: D, C, B, A (tsrank.c default_weights, float4). */
const WEIGHTS = [0.1, 0.2, 0.4, 1.0].map(f);
const WEIGHT_INDEX: Record<string, number> = { A: 3, B: 2, C: 1, D: 0 };

/** One lexeme of a tsvector: its text and the weight index of each stored position, in order. */
export interface VectorLexeme {
  text: string;
  weights: number[];
}

/** One distinct operand of an OR query. */
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
        while (i < text.length && text[i]! >= '0' && text[i]! <= '9') i++;
        const letter = text[i];
        if (letter !== undefined && letter in WEIGHT_INDEX) {
          weights.push(WEIGHT_INDEX[letter]!);
          i++;
        } else weights.push(0);
        if (text[i] !== ',') break;
        i++;
      }
    } else weights.push(0); // no positions: tsrank.c ranks one position of weight D
    out.push({ text: lexeme, weights });
  }
  return out;
}

/**
 * Parses `to_tsquery(...)::text` of an OR query into its distinct operands in tsrank.c's order
 * (SortAndUniqItems: sorted by lexeme, duplicates dropped). Null when the query is of another
 * shape, or names one lexeme both as prefix and exact (which copy survives depends on qsort).
 */
export function parseOrQuery(text: string): QueryOperand[] | null {
  const operands: QueryOperand[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '|' || c === '(' || c === ')') {
      i++;
      continue;
    }
    if (c !== "'") return null; // &, !, <->: not an OR query
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

/** The float4 term calc_rank_or adds (before the division by pi^2/6) for one matching lexeme. */
export function lexemeTerm(weights: readonly number[]): number {
  let resj = 0;
  let wjm = -1;
  let jm = 0;
  for (let j = 0; j < weights.length; j++) {
    const w = WEIGHTS[weights[j]!]!;
    resj = f(resj + f(w / ((j + 1) * (j + 1))));
    if (w > wjm) {
      wjm = w;
      jm = j;
    }
  }
  return f(f(wjm + resj) - f(wjm / ((jm + 1) * (jm + 1))));
}

/** Adds one matching lexeme's term to the running float4 sum, as calc_rank_or does. */
export const addTerm = (sum: number, term: number): number => f(sum + term / 1.64493406685);

/** The final division by the number of distinct operands. */
export const finishRank = (sum: number, operands: number): number => (operands > 0 ? f(sum / operands) : sum);
