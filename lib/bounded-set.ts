/**
 * Keys remembered as a hint, at most `max`: when an addition would pass it, all are forgotten at once
 * (a forgotten key only costs its owner the slower path once), so a flood of distinct keys costs memory
 * only up to the bound.
 */
export class BoundedSet {
  private readonly keys = new Set<string>();

  constructor(private readonly max: number) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(keys: readonly string[]): void {
    if (this.keys.size + keys.length > this.max) this.keys.clear();
    for (const key of keys) this.keys.add(key);
  }
}
