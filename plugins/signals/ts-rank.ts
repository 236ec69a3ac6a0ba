/**
 * Postgres' `ts_rank(tsvector, tsquery)` (default weights, no normalization) for OR queries of
 * plain and prefix lexemes, computed exactly as src/backend/utils/adt/tsrank.c does:
 * calc_rank_or sums, per distinct query operand in sorted order and per matching lexeme in the
 * vector's order, (wjm + resj - wjm/(jm+1)^2) / 1.64493406685 where resj = sum w(pos_j)/(j+1)^2
 * over the lexeme's positions and wjm is its largest weight (first such position), then divides
 * by the number of distinct operands. C evaluates in float4 except the division by the double
 * constant and the addition to the running sum, which are double and rounded back to float4:
 * every step here is rounded the same way with Math.fround.
 * Other query shapes (AND, phrase, NOT, weight restrictions) are reported as unsupported by
 * parseOrQuery (lib/text-search.ts) and ranked by the database instead.
 */

import type { VectorLexeme } from '../../lib/text-search.ts';

const f = Math.fround;
/** Default weights by weight index: D, C, B, A (tsrank.c default_weights, float4). */
const WEIGHTS = [0.1, 0.2, 0.4, 1.0].map(f);

/** The float4 term calc_rank_or adds (before the division by pi^2/6) for one matching lexeme. */
export function lexemeTerm(weights: VectorLexeme['weights']): number {
  if (weights.length === 0) weights = [0]; // no positions: tsrank.c ranks one position of weight D
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
