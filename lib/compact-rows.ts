/**
 * The rows of a catalog copy held in a few large arrays instead of objects: the garbage collector
 * marks every object, array and string a process holds on each full collection, and at 100k
 * products and 100k signals the copies' millions of cells made those collections, not the
 * searches, what slowed answers from a large catalog. Here a copy is a few dozen cells plus its
 * distinct values, whatever its size:
 * - text no two rows share (ids, names, descriptions): UTF-8 in one byte array;
 * - every other field: per row, the number of its value among the field's distinct values, each
 *   held once (tag lists, prices, platforms...: a catalog repeats them), in 1, 2 or 4 bytes. JSON
 *   fields are read as their text (Postgres spells a jsonb value one way) and each distinct text
 *   parsed once, rather than every row's value parsed and compared.
 * A row is rebuilt when an answer needs it (a page's rows, a lookup); searches read the fields
 * they filter on by number. Rebuilt rows are new objects, but the values they share are the
 * copy's: read-only by convention.
 */

/** The fields of R holding text. */
export type TextKey<R> = { [K in keyof R]-?: R[K] extends string ? K : never }[keyof R] & string;

/** A field's values: row i has values[codes[i]]. */
export interface Column<V> {
  codes: Uint8Array | Uint16Array | Uint32Array;
  values: readonly V[];
}

/** Row i's value of a field. */
export const valueAt = <V>(column: Column<V>, i: number): V => column.values[column.codes[i]!]!;

/** A field of no rows (their fields are not known). */
const NO_VALUES: Column<never> = { codes: new Uint8Array(0), values: [] };

/** A row as read: its `J` fields as JSON text (null: SQL NULL). */
export type RawRow<R, J extends keyof R> = { [K in keyof R]: K extends J ? string | null : R[K] };

export interface CompactRowsOptions<R, J extends keyof R> {
  /** The fields held as text (each row's own). */
  texts: readonly TextKey<R>[];
  /** Text fields `find` looks rows up by. */
  unique?: readonly TextKey<R>[];
  /** The fields read as JSON text. */
  json?: readonly J[];
}

export class CompactRows<R extends object, J extends keyof R = never> {
  readonly size: number;
  private readonly keys: readonly (keyof R & string)[];
  private readonly texts: readonly TextKey<R>[];
  /** The texts, row after row; the end of row i's text t at ends[i * texts.length + t]. */
  private readonly bytes: Buffer;
  private readonly ends: Uint32Array;
  private readonly columns = new Map<string, Column<unknown>>();
  /** Per field `find` looks up: the rows in the order of that field's text. */
  private readonly sorted = new Map<string, Int32Array>();

  constructor(rows: readonly RawRow<R, J>[], { texts, unique = [], json = [] }: CompactRowsOptions<R, J>) {
    const n = rows.length;
    this.size = n;
    this.keys = n ? (Object.keys(rows[0]!) as (keyof R & string)[]) : [];
    this.texts = texts;
    const text = (i: number, t: number) => rows[i]![texts[t]!] as string;
    let length = 0;
    for (let i = 0; i < n; i++) for (let t = 0; t < texts.length; t++) length += Buffer.byteLength(text(i, t));
    this.bytes = Buffer.allocUnsafeSlow(length);
    this.ends = new Uint32Array(n * texts.length);
    let at = 0;
    for (let i = 0; i < n; i++) {
      for (let t = 0; t < texts.length; t++) {
        at += this.bytes.write(text(i, t), at, 'utf8');
        this.ends[i * texts.length + t] = at;
      }
    }
    for (const key of this.keys) {
      if ((texts as readonly string[]).includes(key)) continue;
      const parse = (json as readonly string[]).includes(key);
      const numbers = new Map<unknown, number>();
      const values: unknown[] = [];
      const codes = new Uint32Array(n);
      for (let i = 0; i < n; i++) {
        const raw = rows[i]![key];
        let code = numbers.get(raw);
        if (code === undefined) {
          numbers.set(raw, (code = values.length));
          values.push(parse && raw !== null ? JSON.parse(raw as string) : raw);
        }
        codes[i] = code;
      }
      const narrow = values.length <= 0x100 ? Uint8Array.from(codes) : values.length <= 0x10000 ? Uint16Array.from(codes) : codes;
      this.columns.set(key, { codes: narrow, values });
    }
    for (const key of unique) {
      const order = Int32Array.from(rows.keys());
      // Code unit order, the order `find` compares in.
      order.sort((a, b) => {
        const x = rows[a]![key] as string;
        const y = rows[b]![key] as string;
        return x < y ? -1 : x > y ? 1 : 0;
      });
      this.sorted.set(key, order);
    }
  }

  /** Row i, rebuilt (its fields in the order the rows had them). */
  row(i: number): R {
    const out: Record<string, unknown> = {};
    for (const key of this.keys) {
      const column = this.columns.get(key);
      out[key] = column ? column.values[column.codes[i]!] : this.text(i, key as TextKey<R>);
    }
    return out as R;
  }

  /** Text field `key` of row i. */
  text(i: number, key: TextKey<R>): string {
    const slot = i * this.texts.length + this.texts.indexOf(key);
    return this.bytes.toString('utf8', slot === 0 ? 0 : this.ends[slot - 1]!, this.ends[slot]!);
  }

  /** The values of a field held by number (not one of the text fields). */
  column<K extends keyof R & string>(key: K): Column<R[K]> {
    return (this.columns.get(key) ?? NO_VALUES) as Column<R[K]>;
  }

  /** The row whose text field `key` (one of the constructor's `unique`) is `value`; undefined when none. */
  find(key: TextKey<R>, value: string): number | undefined {
    const order = this.sorted.get(key)!;
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.text(order[mid]!, key) < value) lo = mid + 1;
      else hi = mid;
    }
    return lo < order.length && this.text(order[lo]!, key) === value ? order[lo] : undefined;
  }
}
