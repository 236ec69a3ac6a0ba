import { readCapped } from '../../lib/streams.ts';
import { ProtocolError } from '../../core/errors.ts';
import { assertSafeInput } from '../../core/validation.ts';

function decode(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text; // malformed escapes stay literal (as URLSearchParams would keep them)
  }
}

/**
 * Query string of a request URL as an object (application/x-www-form-urlencoded rules): a repeated
 * key becomes an array, a single one a string. Parsed by hand: this runs on every request.
 */
export function queryObject(url: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const start = url.indexOf('?');
  if (start === -1) return out;
  const hash = url.indexOf('#', start);
  const query = url.slice(start + 1, hash === -1 ? undefined : hash);
  for (const pair of query.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    const prior = out[key];
    if (prior === undefined) out[key] = value;
    else if (Array.isArray(prior)) prior.push(value);
    else out[key] = [prior, value];
  }
  return out;
}

/**
 * Read a JSON body's bytes with a byte cap enforced while streaming (a missing or lying
 * Content-Length cannot get past it); the bytes are kept for signature verification.
 * `prefix` names the body in field paths (`body.a.b`; empty for task arguments).
 */
export async function readJsonBytes(request: Request, maxBytes: number, prefix = 'body'): Promise<Uint8Array> {
  const type = request.headers.get('content-type');
  if (type && !/^application\/([a-z0-9.+-]+\+)?json\b/i.test(type)) {
    throw new ProtocolError('UNSUPPORTED_MEDIA_TYPE', `Expected an application/json body, got ${type.slice(0, 80)}`, { status: 415 });
  }
  let bytes: Uint8Array | null;
  try {
    // A declared length within the cap bounds the body (the server frames it by that length): take
    // it whole, without a stream reader. Otherwise (chunked, or no length) read capped as it streams.
    const declared = request.headers.get('content-length');
    if (declared !== null && /^\d{1,10}$/.test(declared) && Number(declared) <= maxBytes && !request.headers.has('transfer-encoding')) {
      bytes = new Uint8Array(await request.arrayBuffer());
      if (bytes.byteLength > maxBytes) bytes = null;
    } else bytes = await readCapped(request.body, maxBytes);
  } catch {
    // The client went away (or broke the framing) mid-body: its doing, not a server error.
    throw new ProtocolError('INVALID_REQUEST', `${prefix || 'body'}: the request body could not be read to its end`, { status: 400 });
  }
  if (!bytes) throw new ProtocolError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);
  return bytes;
}

/** Read and parse a JSON body (see readJsonBytes and parseJsonBytes). Empty body -> undefined. */
export async function readJsonBody(request: Request, maxBytes: number, prefix = 'body'): Promise<unknown> {
  return parseJsonBytes(await readJsonBytes(request, maxBytes, prefix), prefix);
}

const UTF8 = new TextDecoder('utf-8', { fatal: false });

/**
 * Parse JSON bytes; empty -> undefined, malformed -> INVALID_REQUEST. Nesting is capped here (deep
 * documents would exhaust the stack of whatever walks them next: serializers, Postgres' jsonb);
 * strings are checked where the body is validated (parseOrThrow), so each host keeps its error shape.
 */
export function parseJsonBytes(bytes: Uint8Array, prefix = 'body'): unknown {
  if (bytes.byteLength === 0) return undefined;
  const text = UTF8.decode(bytes);
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ProtocolError('INVALID_REQUEST', `${prefix || 'body'}: malformed JSON (${(error as Error).message})`, { field: prefix || undefined });
  }
  assertSafeInput(value, prefix, { strings: false });
  return value;
}
