/** A labelled query: what a buyer asks, and the ids they expect with a grade (2: what was asked for, 1: a fair second choice). */
export interface Judged {
  query: string;
  relevant: Record<string, number>;
}

/**
 * NDCG@k of a ranking against a labelled query: the discounted gain of the first k ids
 * (gain 2^grade - 1, discount log2(rank + 1)) over the best possible ranking's.
 */
export function ndcgAt(k: number, ranked: readonly string[], relevant: Record<string, number>): number {
  const dcg = (grades: number[]) => grades.slice(0, k).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(relevant).sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranked.map((id) => relevant[id] ?? 0)) / ideal;
}

/** Mean NDCG@k over a labelled set, each query ranked by `rank` (ids, best first). */
export async function meanNdcg(k: number, set: readonly Judged[], rank: (query: string) => Promise<readonly string[]> | readonly string[]): Promise<number> {
  let sum = 0;
  for (const q of set) sum += ndcgAt(k, await rank(q.query), q.relevant);
  return sum / set.length;
}
