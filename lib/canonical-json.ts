import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted (by code unit), no whitespace, `undefined` members dropped,
 * arrays kept in order. Two payloads that differ only in key order or spacing serialize equally.
 * Functions and symbols are written as `null`, any other object as its own enumerable members.
 */
export function canonicalJson(value: unknown): string {
  // The native JSON.stringify writes the text (several times faster than building it member by member):
  // `sorted` hands it the same objects when their keys are already in order, sorted copies when not.
  let out: string | undefined;
  try {
    out = JSON.stringify(sorted(value));
  } catch (caught) {
    if (caught !== UNORDERABLE) throw caught;
    out = memberwise(value);
  }
  return out === undefined ? 'null' : out;
}

/** The definition, written member by member: for the objects no copy can hold in order. */
function memberwise(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const out = JSON.stringify(value);
    return out === undefined ? 'null' : out;
  }
  if (Array.isArray(value)) return `[${value.map((x) => (x === undefined ? 'null' : memberwise(x))).join(',')}]`;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${memberwise(o[k])}`).join(',')}}`;
}

/** Array.prototype.sort's order (by code unit); an insertion sort for the few keys of most objects, where sort's own setup costs more. */
function sortKeys(keys: string[]): void {
  if (keys.length > 12) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > k; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = k;
  }
}

/** An object with integer-like keys ("2", "10") lists them first, in numeric order, whatever order they were added in. */
const UNORDERABLE = new Error('integer-like keys out of code-unit order');
const DIGIT = /^[0-9]/;

const PLAIN = Object.prototype;

/**
 * The last out-of-order key list seen per length, and its sorted order: the objects of one array
 * (a batch's events) share their keys, sorted once (undefined order: integer-like keys).
 */
const seenKeys: Array<{ keys: string[]; order: string[] | undefined } | undefined> = [];

/** `keys` (out of order) sorted, or undefined when one is integer-like (UNORDERABLE). */
function orderOf(keys: string[]): string[] | undefined {
  const seen = keys.length < 16 ? seenKeys[keys.length] : undefined;
  if (seen) {
    let same = true;
    for (let i = 0; i < keys.length && same; i++) same = seen.keys[i] === keys[i];
    if (same) return seen.order;
  }
  const order = keys.slice();
  sortKeys(order);
  const orderable = !order.some((k) => DIGIT.test(k));
  if (keys.length < 16) seenKeys[keys.length] = { keys, order: orderable ? order : undefined };
  return orderable ? order : undefined;
}

/** `value` as canonicalJson writes it, for JSON.stringify: the input's own objects wherever nothing differs. */
function sorted(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return typeof value === 'function' || typeof value === 'symbol' ? null : value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const x = value[i];
      const y = typeof x === 'object' && x !== null ? sorted(x) : x;
      if (y !== x) (copy ??= value.slice())[i] = y;
    }
    return copy ?? value;
  }
  const o = value as Record<string, unknown>;
  let keys = Object.keys(o);
  let inOrder = true;
  for (let i = 1; i < keys.length && inOrder; i++) inOrder = keys[i - 1]! < keys[i]!;
  // A copy when the order differs, or when JSON.stringify would not write the object's own members (a Date, a toJSON).
  let copy: Record<string, unknown> | undefined;
  if (!inOrder || Object.getPrototypeOf(o) !== PLAIN || typeof o.toJSON === 'function') {
    copy = {};
    if (!inOrder) {
      const order = orderOf(keys);
      if (!order) throw UNORDERABLE;
      keys = order;
    }
  }
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    const y = x === undefined ? x : sorted(x);
    if (!copy && y !== x) {
      copy = {};
      for (let j = 0; j < i; j++) copy[keys[j]!] = o[keys[j]!];
    }
    if (copy && y !== undefined) copy[k] = y;
  }
  return copy ?? o;
}

/**
 * Top-level request members that are transport envelope, not the operation: a retry that changes
 * only these (a new `context.correlation_id`, another push registration) is the same request.
 */
export const ENVELOPE_MEMBERS: readonly string[] = ['idempotency_key', 'context', 'push_notification_config', 'adcp_major_version', 'adcp_version'];

/** SHA-256 (hex) of the canonical JSON of a payload without the named top-level members (default: the envelope). */
export function payloadHash(payload: Record<string, unknown>, exclude: readonly string[] = ENVELOPE_MEMBERS): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(payload)) if (!exclude.includes(k)) rest[k] = v;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
}
