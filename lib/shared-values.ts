/**
 * One instance of each distinct value among the rows of a catalog copy. A large catalog repeats
 * the same tags, channels, countries, formats and pricing options in most of its rows, and every
 * string, array and object a copy holds is one more cell the garbage collector marks on each full
 * collection: at 100k products the copy was ~5M cells, and the collections marking them, not the
 * searches, made answers slower than in a small catalog. Values are equal when their JSON is;
 * what `of` returns may be shared by many rows, so it is read-only (as the copies already are).
 */
export class SharedValues {
  private readonly seen = new Map<string, unknown>();

  /** The value equal to `value` seen first by this instance (`value` itself the first time); nested values shared too. */
  of<T>(value: T): T {
    if (typeof value === 'string') return this.intern(`s${value}`, value);
    if (value === null || typeof value !== 'object') return value;
    const key = `j${JSON.stringify(value)}`;
    const known = this.seen.get(key);
    if (known !== undefined) return known as T;
    // New: its parts may still be known ones.
    const inner: unknown = Array.isArray(value) ? value.map((x) => this.of(x)) : Object.fromEntries(Object.entries(value).map(([k, x]) => [k, this.of(x)]));
    return this.intern(key, inner as T);
  }

  /** A copy of `row` with its fields shared (`of`), but for those named in `own` (ids, names: never alike). */
  fields<T extends object>(row: T, own: ReadonlySet<string>): T {
    const out = { ...row };
    for (const k of Object.keys(out) as Array<keyof T & string>) if (!own.has(k)) out[k] = this.of(out[k]);
    return out;
  }

  private intern<T>(key: string, value: T): T {
    const known = this.seen.get(key);
    if (known !== undefined) return known as T;
    this.seen.set(key, value);
    return value;
  }
}
