import { timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import type { ClockPort } from '../../core/ports/clock.ts';

type Json = Record<string, any>;

/**
 * What a preview page renders, carried by the preview id itself instead of a stored row: the format
 * (by catalog id, resolved when viewed), the assets with macros applied, the brand, the variant name
 * and the render size.
 */
export interface PreviewLink {
  format: string;
  assets: Json;
  brand?: Json;
  variant: string;
  width?: number;
  height?: number;
}

/** Longest preview URL handed out stateless (browsers and proxies take ~2 KB safely); longer ones are stored rows. */
export const MAX_LINK_URL = 2000;
const KEY_NAME = 'preview-link';
/** Plaintext's first byte: the layout version and whether the JSON is deflated. */
const RAW = 1;
const DEFLATED = 2;
// Sealing is synchronous: one scratch buffer for the plaintext and one for the output serve every call.
// A plain Uint8Array: Buffer's subarray costs several times more under Bun.
const scratch = new Uint8Array(8192);
const scratchBody = scratch.subarray(1);
const output = Buffer.allocUnsafe(8192);
const encoder = new TextEncoder();
/** Bytes of the MAC kept (HMAC-SHA256 truncated to 128 bits). */
const MAC = 16;
const mac = (key: Buffer, exp: string, plain: Uint8Array) => {
  const digest = new Bun.CryptoHasher('sha256', key).update(exp).update('.').update(plain).digest();
  return new Uint8Array(digest.buffer, digest.byteOffset, MAC);
};
/** Inflated size a signed link can never exceed (its URL is at most MAX_LINK_URL). */
const MAX_PLAIN = 64 * 1024;

const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');

/**
 * The key shared by every instance serving one database: made once by the first instance that needs
 * it (a race of two starting instances keeps the first row, ON CONFLICT), sealed at rest with the
 * deployment's SecretBox. Never logged.
 */
export async function loadLinkKey(db: Queryable, box: SecretBoxPort, clock: ClockPort): Promise<Buffer> {
  const read = async () => (await db.query<{ secret: string }>(sql`SELECT secret FROM creative_keys WHERE name = ${KEY_NAME}::text`))[0]?.secret;
  let stored = await read();
  if (stored === undefined) {
    const fresh = await box.seal(b64(crypto.getRandomValues(new Uint8Array(32))));
    await db.query(sql`
      INSERT INTO creative_keys (name, secret, created_at) VALUES (${KEY_NAME}::text, ${fresh}::text, ${clock.now()}::timestamptz)
      ON CONFLICT (name) DO NOTHING`);
    stored = await read();
  }
  const key = Buffer.from(await box.open(stored!), 'base64url');
  if (key.length !== 32) throw new Error('creative: the stored preview-link key is not 32 bytes');
  return key;
}

/**
 * Stateless preview ids: `{expiry, base 36 seconds}.{base64url(plaintext, MAC)}` where the plaintext
 * is a flag byte and the link's JSON (deflated when needed) and the MAC the first 128 bits of
 * HMAC-SHA256(key, `{expiry}.` + plaintext): an id cannot be forged or altered, its expiry included.
 * Signed, not encrypted: the id shows the assets it renders (the page shows nearly all of them; the
 * requester sent them). Stored-row ids (`{24 characters}.{expiry}`) never match this shape.
 */
export class PreviewLinks {
  private key: Promise<Buffer> | null = null;

  constructor(private readonly load: () => Promise<Buffer>) {}

  /** The key, read once per instance (a failed read is tried again on the next call). */
  ready(): Promise<Buffer> {
    return (this.key ??= this.load().catch((error) => {
      this.key = null;
      throw error;
    }));
  }

  /**
   * The id for `link` expiring at `expiresAt`, with the key from ready(); undefined when even
   * deflated it is longer than `maxLength` (the preview is then stored). Deflate runs only when the
   * plain JSON does not fit: it costs more than the rest of sealing together.
   */
  static seal(key: Buffer, link: PreviewLink, expiresAt: Date, maxLength: number): string | undefined {
    const exp = Math.floor(expiresAt.getTime() / 1000).toString(36);
    const json = JSON.stringify(link);
    // Whether plaintext + MAC fit in base64url after `{exp}.`
    const fits = (plain: number) => exp.length + 1 + Math.ceil(((plain + MAC) * 4) / 3) <= maxLength;
    let plain: Uint8Array | undefined;
    // A JSON string has at least as many bytes as characters, at most 3 per character.
    if (fits(1 + json.length) && 1 + json.length * 3 <= scratch.length) {
      scratch[0] = RAW;
      const n = 1 + encoder.encodeInto(json, scratchBody).written;
      if (fits(n)) plain = scratch.subarray(0, n);
    }
    if (!plain) {
      // More than open() inflates: stored.
      if (Buffer.byteLength(json) > MAX_PLAIN) return undefined;
      const body = deflateRawSync(json);
      if (!fits(1 + body.length)) return undefined;
      plain = Buffer.concat([Buffer.of(DEFLATED), body]);
    }
    const n = plain.length;
    const out = n + MAC <= output.length ? output : Buffer.allocUnsafe(n + MAC);
    out.set(plain, 0);
    out.set(mac(key, exp, plain), n);
    return `${exp}.${out.toString('base64url', 0, n + MAC)}`;
  }

  /** The link an id holds, or null when it is not one of ours (malformed, altered, signed with another key). Expiry is the caller's. */
  static open(key: Buffer, exp: string, sealed: string): PreviewLink | null {
    const bytes = Buffer.from(sealed, 'base64url');
    // One spelling per id: base64url's unused low bits of the last character may not vary.
    if (bytes.length < 1 + MAC || bytes.toString('base64url') !== sealed) return null;
    const plain = bytes.subarray(0, bytes.length - MAC);
    if (!timingSafeEqual(mac(key, exp, plain), bytes.subarray(bytes.length - MAC))) return null;
    try {
      const flag = plain[0];
      const json = flag === DEFLATED ? inflateRawSync(plain.subarray(1), { maxOutputLength: MAX_PLAIN }) : flag === RAW ? plain.subarray(1) : null;
      return json ? (JSON.parse(json.toString()) as PreviewLink) : null;
    } catch {
      return null;
    }
  }
}

/** `{expiry}.{sealed}`: the shape of a stateless id (base64url of at least a flag, `{}` and the MAC). */
export const LINK_ID = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{26,4096})$/;
