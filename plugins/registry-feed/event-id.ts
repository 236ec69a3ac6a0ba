/**
 * UUID v7 ids that are strictly increasing across the whole feed, not just within a process:
 * the next id is a fresh v7 when that sorts above the last one, else the last one plus one
 * (counting in the 74 random bits, version and variant kept).
 */
const hex = (id: string) => id.replace(/-/g, '');
const format = (h: string) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;

export function successor(last: string): string {
  const n = BigInt(`0x${hex(last)}`);
  const ts = n >> 80n;
  const randA = (n >> 64n) & 0xfffn;
  const randB = n & ((1n << 62n) - 1n);
  let combined = ((randA << 62n) | randB) + 1n;
  let time = ts;
  if (combined >= 1n << 74n) {
    // Counter exhausted within this millisecond: borrow the next millisecond.
    combined = 0n;
    time += 1n;
  }
  const a = combined >> 62n;
  const b = combined & ((1n << 62n) - 1n);
  const value = (time << 80n) | (0x7n << 76n) | (a << 64n) | (0x2n << 62n) | b;
  return format(value.toString(16).padStart(32, '0'));
}

/** An id above `last` (or `fresh` when it already is). */
export function nextEventId(last: string | null, fresh: string): string {
  if (last === null || hex(fresh) > hex(last)) return fresh;
  return successor(last);
}
