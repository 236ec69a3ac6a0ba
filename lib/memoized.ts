/**
 * A pure function of a string, its answers remembered: for the few distinct values a process sees
 * again and again (URLs, words). At most `max` are kept; when full all are forgotten at once (a miss
 * only costs computing again), so a flood of distinct keys costs memory only up to the bound.
 */
export function memoized<V extends {} | null>(max: number, compute: (key: string) => V): (key: string) => V {
  const known = new Map<string, V>();
  return (key) => {
    let value = known.get(key);
    if (value === undefined) {
      if (known.size >= max) known.clear();
      known.set(key, (value = compute(key)));
    }
    return value;
  };
}
