/**
 * Insert `c` into `best` (sorted by `compare`, at most `keep` long) when it ranks among the first `keep`:
 * a top-k without sorting every candidate (the catalogs' searches page a few out of thousands).
 */
export function keepBest<T>(best: T[], c: T, keep: number, compare: (a: T, b: T) => number): void {
  if (best.length === keep && compare(c, best[keep - 1]!) >= 0) return;
  let lo = 0;
  let hi = best.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(best[mid]!, c) < 0) lo = mid + 1;
    else hi = mid;
  }
  best.splice(lo, 0, c);
  if (best.length > keep) best.pop();
}
