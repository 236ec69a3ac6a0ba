import type { KeyResolverPort, PublicJwk, SignatureAlg } from '../../../core/ports/signer.ts';
import type { ClockPort } from '../../../core/ports/clock.ts';
import { HeaderMalformed, parseSignatureHeaders, REQUIRED_COMPONENTS } from './fields.ts';
import { ComponentMissing, signatureBase, type RequestView } from './base.ts';
import { TargetUriError } from './target-uri.ts';
import { digestMatches } from './digest.ts';
import { webhookTag, MAX_WINDOW_SECONDS } from './sign.ts';
import { parseStrictJsonBytes, StrictJsonError } from '../strict-json.ts';

export const MAX_WEBHOOK_BYTES = 1024 * 1024;
const CLOCK_SKEW_SECONDS = 60;

/** Nonces seen per key id (the replay cache), shared by every instance of the receiver. */
export interface ReplayStore {
  /** Live (unexpired) entries of a key id. */
  count(keyid: string, now: Date): Promise<number>;
  /** Record (keyid, nonce) until `expiresAt`; false when a live entry already exists (a replay). */
  record(keyid: string, nonce: string, expiresAt: Date, now: Date): Promise<boolean>;
}

/** Revocation state of a sender key, as last refreshed from the sender's revocation list. */
export interface RevocationCheck {
  status(keyid: string, now: Date): Promise<'ok' | 'revoked' | 'stale'>;
}

export interface VerifierOptions {
  namespace: string;
  keys: KeyResolverPort;
  replay: ReplayStore;
  revocation?: RevocationCheck;
  clock: ClockPort;
  /** Live replay-cache entries allowed per key id before `rate_abuse` (step 9a). */
  perKeyidCap?: number;
  /** `{ns}_use` values accepted on the verifying JWK. */
  allowedPurposes?: readonly string[];
  maxBodyBytes?: number;
}

export interface WebhookRequest extends RequestView {
  body: Uint8Array;
}

export type VerifyFailure = { ok: false; status: number; code: string; message: string; step?: number };
export type VerifySuccess = { ok: true; keyid: string; jwk: PublicJwk; payload: unknown };
export type VerifyResult = VerifySuccess | VerifyFailure;

const ALGS: readonly SignatureAlg[] = ['ed25519', 'ecdsa-p256-sha256'];

const fail = (step: number, code: string, message: string, status = 401): VerifyFailure => ({ ok: false, status, code, message, step });

/** Key type of a JWK matches the signature algorithm. */
function jwkFits(jwk: PublicJwk, alg: SignatureAlg): boolean {
  return alg === 'ed25519' ? jwk.kty === 'OKP' && jwk.crv === 'Ed25519' : jwk.kty === 'EC' && jwk.crv === 'P-256';
}

const IMPORT: Record<SignatureAlg, Algorithm | EcKeyImportParams> = { ed25519: { name: 'Ed25519' }, 'ecdsa-p256-sha256': { name: 'ECDSA', namedCurve: 'P-256' } };
const VERIFY: Record<SignatureAlg, Algorithm | EcdsaParams> = { ed25519: { name: 'Ed25519' }, 'ecdsa-p256-sha256': { name: 'ECDSA', hash: 'SHA-256' } };

/** Media type of a Content-Type value is exactly application/json (parameters allowed). */
export function isJsonContentType(value: string | null): boolean {
  return !!value && value.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/** Checks done before any signature work: the body size (413) and the content type (415). */
export function precheck(req: WebhookRequest, maxBytes = MAX_WEBHOOK_BYTES): VerifyFailure | null {
  if (req.body.byteLength > maxBytes) return { ok: false, status: 413, code: 'webhook_payload_too_large', message: `Webhook body exceeds ${maxBytes} bytes` };
  if (!isJsonContentType(req.headers.get('content-type'))) {
    return { ok: false, status: 415, code: 'webhook_content_type_invalid', message: 'Webhook Content-Type must be application/json' };
  }
  return null;
}

/**
 * The RFC 9421 webhook verifier: the pre-checks, then the 14-step checklist in order, stopping at
 * the first failure. Nothing is recorded in the replay cache until the signature and digest hold.
 */
export function createWebhookVerifier(options: VerifierOptions) {
  const tag = webhookTag(options.namespace);
  const purposes = options.allowedPurposes ?? ['webhook-signing', 'request-signing'];
  const useField = `${options.namespace}_use`;
  const cap = options.perKeyidCap ?? 10_000;

  return async function verify(req: WebhookRequest): Promise<VerifyResult> {
    const pre = precheck(req, options.maxBodyBytes);
    if (pre) return pre;
    const now = options.clock.now();
    const nowSec = Math.floor(now.getTime() / 1000);

    // 1. Parse the sig1 pair.
    let parsed;
    try {
      parsed = parseSignatureHeaders(req.headers.get('signature-input'), req.headers.get('signature'));
    } catch (error) {
      if (error instanceof HeaderMalformed) return fail(1, 'webhook_signature_header_malformed', error.message);
      throw error;
    }
    const { params, components } = parsed;
    // 2. Every parameter present.
    if (params.created === undefined || params.expires === undefined || !params.nonce || !params.keyid || !params.alg || params.tag === undefined) {
      return fail(2, 'webhook_signature_params_incomplete', 'created, expires, nonce, keyid, alg and tag are all required');
    }
    // 3. Tag, byte for byte.
    if (params.tag !== tag) return fail(3, 'webhook_signature_tag_invalid', `tag must be ${tag}`);
    // 4. Algorithm.
    const alg = params.alg as SignatureAlg;
    if (!ALGS.includes(alg)) return fail(4, 'webhook_signature_alg_not_allowed', `alg must be one of ${ALGS.join(', ')}`);
    // 5. Window.
    const { created, expires } = params;
    if (!(expires > created) || created > nowSec + CLOCK_SKEW_SECONDS || expires < nowSec - CLOCK_SKEW_SECONDS || expires - created > MAX_WINDOW_SECONDS) {
      return fail(5, 'webhook_signature_window_invalid', 'signature is expired, not yet valid, or its window exceeds 300 s');
    }
    // 6. The five components are covered (and each covered header is present).
    const missing = REQUIRED_COMPONENTS.filter((c) => !components.includes(c));
    if (missing.length) return fail(6, 'webhook_signature_components_incomplete', `uncovered components: ${missing.join(', ')}`);
    if (new Set(components).size !== components.length) return fail(1, 'webhook_signature_header_malformed', 'a component is listed twice');
    // 7. Resolve the key.
    const jwk = await options.keys.resolve(params.keyid);
    if (!jwk) return fail(7, 'webhook_signature_key_unknown', `no published key ${params.keyid}`);
    // 8. Key purpose.
    const ops = jwk.key_ops;
    if ((jwk.use !== undefined && jwk.use !== 'sig') || !Array.isArray(ops) || !ops.includes('verify') || !purposes.includes(String(jwk[useField]))) {
      return fail(8, 'webhook_signature_key_purpose_invalid', `key ${params.keyid} is not a webhook-signing verification key`);
    }
    // 9. Revocation.
    if (options.revocation) {
      const state = await options.revocation.status(params.keyid, now);
      if (state === 'revoked') return fail(9, 'webhook_signature_key_revoked', `key ${params.keyid} is revoked`);
      if (state === 'stale') return fail(9, 'webhook_signature_revocation_stale', 'the revocation list has not been refreshed in time');
    }
    // 9a. Per-keyid replay-cache cap, before any cryptographic work.
    if ((await options.replay.count(params.keyid, now)) >= cap) {
      return fail(9, 'webhook_signature_rate_abuse', `too many live nonces for key ${params.keyid}`);
    }
    // 10. Signature over the canonical base.
    let base: string;
    try {
      base = signatureBase(components, parsed.paramsValue, req);
    } catch (error) {
      if (error instanceof TargetUriError) return fail(10, 'webhook_target_uri_malformed', error.message);
      if (error instanceof ComponentMissing) return fail(6, 'webhook_signature_components_incomplete', error.message);
      throw error;
    }
    let valid = false;
    if (jwkFits(jwk, alg) && parsed.signature.byteLength === 64) {
      try {
        const bare: JsonWebKey = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, ...(jwk.y ? { y: jwk.y } : {}) };
        const key = await crypto.subtle.importKey('jwk', bare, IMPORT[alg] as any, false, ['verify']);
        valid = await crypto.subtle.verify(VERIFY[alg] as any, key, parsed.signature as Uint8Array<ArrayBuffer>, new TextEncoder().encode(base));
      } catch {
        valid = false;
      }
    }
    if (!valid) return fail(10, 'webhook_signature_invalid', 'signature does not verify');
    // 11. Content-Digest over the raw bytes.
    if (!digestMatches(req.headers.get('content-digest'), req.body)) return fail(11, 'webhook_signature_digest_mismatch', 'Content-Digest does not match the body');
    // 12 + 13. Replay check and record in one atomic statement; kept until expires + 60 s.
    const keepUntil = new Date((Math.max(expires, nowSec) + CLOCK_SKEW_SECONDS) * 1000);
    if (!(await options.replay.record(params.keyid, params.nonce, keepUntil, now))) {
      return fail(12, 'webhook_signature_replayed', 'nonce already used with this key');
    }
    // 14. The body must be JSON without duplicate keys.
    let payload: unknown;
    try {
      payload = parseStrictJsonBytes(req.body);
    } catch (error) {
      if (error instanceof StrictJsonError) return fail(14, 'webhook_body_malformed', error.message);
      throw error;
    }
    return { ok: true, keyid: params.keyid, jwk, payload };
  };
}

export type WebhookVerifier = ReturnType<typeof createWebhookVerifier>;

/** The 401 (or 413/415) answer for a failure. */
export function failureResponse(f: VerifyFailure, scheme = 'Signature'): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (f.status === 401) headers['www-authenticate'] = `${scheme} error="${f.code}"`;
  return new Response(JSON.stringify({ error: f.code, message: f.message }), { status: f.status, headers });
}
