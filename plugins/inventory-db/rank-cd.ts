/**
 * Postgres' `ts_rank_cd(tsvector, tsquery)` (default weights, no normalization) for OR queries of
 * plain and prefix lexemes, as src/backend/utils/adt/tsrank.c computes it.
 *
 * get_docrep lists each position of each vector lexeme some operand matches, one item per
 * (position, lexeme) however many operands match it (lexemes stored without positions add
 * nothing, though they match). For an OR query, Cover finds every item alone a cover (any one
 * operand satisfies the query), so calc_rank_cd adds, in double, Cpos = 1 / InvSum with InvSum =
 * 1 / w of the item's weight, over 1 + nNoise = 1, and rounds the sum to float4 once at the end.
 *
 * Each Cpos is the float4 weight itself (1 / (1 / w) rounds back to w for all four), a multiple of
 * 2^-27 below 2: a sum of fewer than 2^25 of them is exact in double, so the order in which C adds
 * them (compareDocR: position, weight, lexeme) does not change it. A lexeme's items are summed
 * once per vector (lexemeWeight); a rank is the float4 of the sum over the matched lexemes.
 */

/** Cpos by weight index D, C, B, A, as calc_rank_cd computes it from the float4 default weights. */
const CPOS = [0.1, 0.2, 0.4, 1.0].map((w) => 1 / (1 / Math.fround(w)));

/** What one lexeme adds to a vector's rank: Cpos of each of its positions (weight indexes). */
export function lexemeWeight(weights: readonly number[]): number {
  let sum = 0;
  for (const w of weights) sum += CPOS[w]!;
  return sum;
}

/** The rank from the sum over the matched lexemes: calc_rank_cd's `(float4) Wdoc`. */
export const rankCd = (sum: number): number => Math.fround(sum);
