import { createCipheriv, createDecipheriv } from 'node:crypto';
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
const scratch = Buffer.allocUnsafe(8192);
const scratchBody = scratch.subarray(1);
const output = Buffer.allocUnsafe(8192);
const encoder = new TextEncoder();
/** Inflated size a sealed link can never exceed (its URL is at most MAX_LINK_URL). */
const MAX_PLAIN = 64 * 1024;

/** The associated data of an expiry (its base 36 text): a call's previews, and the calls of one second, share it. */
let aad = { exp: '', bytes: Buffer.alloc(0) };
function aadOf(exp: string): Buffer {
  if (aad.exp !== exp) aad = { exp, bytes: Buffer.from(exp) };
  return aad.bytes;
}

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
 * Stateless preview ids: `{expiry, base 36 seconds}.{base64url(iv, AES-256-GCM ciphertext, tag)}`.
 * Authenticated encryption: an id cannot be forged or altered (the expiry is its associated data),
 * and it shows nothing of the manifest that the page does not (tracker URLs, unused assets).
 * Stored-row ids (`{24 characters}.{expiry}`) never match this shape.
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
    // Whether iv + plaintext + tag fit in base64url after `{exp}.`
    const fits = (plain: number) => exp.length + 1 + Math.ceil(((12 + plain + 16) * 4) / 3) <= maxLength;
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
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aadOf(exp));
    const sealed = cipher.update(plain);
    cipher.final();
    const size = 12 + sealed.length + 16;
    const out = size <= output.length ? output : Buffer.allocUnsafe(size);
    out.set(iv, 0);
    out.set(sealed, 12);
    out.set(cipher.getAuthTag(), 12 + sealed.length);
    return `${exp}.${out.toString('base64url', 0, size)}`;
  }

  /** The link an id holds, or null when it is not one of ours (malformed, altered, sealed with another key). Expiry is the caller's. */
  static open(key: Buffer, exp: string, sealed: string): PreviewLink | null {
    const bytes = Buffer.from(sealed, 'base64url');
    // One spelling per id: base64url's unused low bits of the last character may not vary.
    if (bytes.length < 12 + 1 + 16 || bytes.toString('base64url') !== sealed) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
      decipher.setAAD(Buffer.from(exp));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      const plain = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]);
      const flag = plain[0];
      const json = flag === DEFLATED ? inflateRawSync(plain.subarray(1), { maxOutputLength: MAX_PLAIN }) : flag === RAW ? plain.subarray(1) : null;
      return json ? (JSON.parse(json.toString()) as PreviewLink) : null;
    } catch {
      return null;
    }
  }
}

/** `{expiry}.{sealed}`: the shape of a stateless id (base64url of at least iv, one byte and the tag). */
export const LINK_ID = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{40,4096})$/;
