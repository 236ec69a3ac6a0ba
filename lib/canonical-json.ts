import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted (by code unit), no whitespace, `undefined` members dropped,
 * arrays kept in order. Two payloads that differ only in key order or spacing serialize equally.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const out = JSON.stringify(value);
    return out === undefined ? 'null' : out;
  }
  if (Array.isArray(value)) return `[${value.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  const keys = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
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
