import type { PublicJwk, SignatureAlg } from '../../core/ports/signer.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import { HeaderMalformed, hasDuplicateKeys, parseSignatureHeaders, REQUIRED_COMPONENTS, type ParsedSignature } from './fields.ts';
import { ComponentMissing, signatureBase, type RequestView } from './base.ts';
import { TargetUriError } from './target-uri.ts';
import { digestMatches } from './digest.ts';
import { webhookTag, requestTag, MAX_WINDOW_SECONDS } from './sign.ts';
import { parseStrictJsonBytes, StrictJsonError } from '../strict-json.ts';

/** Resolves a signer's key id to its public JWK (e.g. through the operator's brand.json -> jwks_uri). */
export interface KeyResolver {
  resolve(keyid: string): Promise<PublicJwk | null>;
}

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

/** `content-digest` coverage policy (request signing's `covers_content_digest`). */
export type DigestPolicy = 'required' | 'forbidden' | 'either';

/**
 * What distinguishes the RFC 9421 profiles sharing this checklist: webhook signing (tag
 * `{ns}/webhook-signing/v1`, five fixed components, digest required, `webhook_signature_*` codes,
 * a JSON body without duplicate keys) and request signing (tag `{ns}/request-signing/v1`, digest
 * per the verifier's policy, `content-type` whenever there is a body, `request_signature_*` codes).
 */
export interface SignatureProfile {
  tag: string;
  /** Error-code prefix: `webhook` (`webhook_signature_*`) or `request`. */
  prefix: 'webhook' | 'request';
  /** Components every signature covers, besides the digest (and `content-type` for a body, see below). */
  components: readonly string[];
  /** Cover `content-type` only when the request has a body (request signing). */
  contentTypeWithBody: boolean;
  digest: DigestPolicy;
  /** `{ns}_use` values accepted on the verifying JWK. */
  purposes: readonly string[];
  /** Check step 14 (webhooks): the body is JSON without duplicate keys. */
  strictJsonBody: boolean;
}

export interface VerifierOptions {
  namespace: string;
  keys: KeyResolver;
  replay: ReplayStore;
  revocation?: RevocationCheck;
  clock: ClockPort;
  /** Live replay-cache entries allowed per key id before `rate_abuse` (step 9a), or that limit for the resolved key. */
  perKeyidCap?: number | ((jwk: PublicJwk) => number);
  /** `{ns}_use` values accepted on the verifying JWK (default: the profile's). */
  allowedPurposes?: readonly string[];
  maxBodyBytes?: number;
}

export interface WebhookRequest extends RequestView {
  body: Uint8Array;
}

export type VerifyFailure = { ok: false; status: number; code: string; message: string; step?: number | string };
export type VerifySuccess = { ok: true; keyid: string; jwk: PublicJwk; payload: unknown };
export type VerifyResult = VerifySuccess | VerifyFailure;

const ALGS: readonly SignatureAlg[] = ['ed25519', 'ecdsa-p256-sha256'];

/** Key type of a JWK matches the signature algorithm. */
function jwkFits(jwk: PublicJwk, alg: SignatureAlg): boolean {
  return alg === 'ed25519' ? jwk.kty === 'OKP' && jwk.crv === 'Ed25519' : jwk.kty === 'EC' && jwk.crv === 'P-256';
}

/** A JWK's declared `alg` is possible for its key type and curve (RFC 8037, RFC 7518). */
function jwkConsistent(jwk: PublicJwk): boolean {
  if (jwk.alg === undefined) return true;
  if (jwk.alg === 'EdDSA') return jwk.kty === 'OKP' && (jwk.crv === 'Ed25519' || jwk.crv === 'Ed448');
  if (jwk.alg === 'ES256') return jwk.kty === 'EC' && jwk.crv === 'P-256';
  return false;
}

const IMPORT: Record<SignatureAlg, Algorithm | EcKeyImportParams> = {
  ed25519: { name: 'Ed25519' },
  'ecdsa-p256-sha256': { name: 'ECDSA', namedCurve: 'P-256' },
};
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

export function webhookProfile(namespace: string): SignatureProfile {
  return {
    tag: webhookTag(namespace),
    prefix: 'webhook',
    components: REQUIRED_COMPONENTS.filter((c) => c !== 'content-digest'),
    contentTypeWithBody: false,
    digest: 'required',
    // A request-signing key may sign webhooks too (webhook vector 008).
    purposes: ['webhook-signing', 'request-signing'],
    strictJsonBody: true,
  };
}

export function requestProfile(namespace: string, digest: DigestPolicy): SignatureProfile {
  return {
    tag: requestTag(namespace),
    prefix: 'request',
    components: ['@method', '@target-uri', '@authority'],
    contentTypeWithBody: true,
    digest,
    purposes: ['request-signing'],
    strictJsonBody: false,
  };
}

/** Headers the profile covers that are single-valued (a comma means two values were sent). */
const SINGLE_VALUED = ['content-type'];

/**
 * The RFC 9421 verifier checklist shared by both profiles, stopping at the first failure: 1 parse
 * (complete `sig1` pair, no repeated label or digest algorithm, single-valued covered fields, an
 * ASCII authority), 2 parameters, 3 tag, 4 alg, 5 window, 6 components, 7 key, 8 key purpose and
 * consistency, 9 revocation, 9a per-keyid cap, 10 signature, 11 digest, 12-13 replay check and
 * record, 14 (webhooks) strict JSON. Nothing enters the replay cache before the signature and
 * digest hold. Failures are 401 with `{prefix}_signature_*` codes.
 */
export function createVerifier(profile: SignatureProfile, options: VerifierOptions) {
  const { tag, prefix } = profile;
  const purposes = options.allowedPurposes ?? profile.purposes;
  const useField = `${options.namespace}_use`;
  const cap = options.perKeyidCap ?? 10_000;
  const capOf = typeof cap === 'function' ? cap : () => cap;
  const code = (name: string) => `${prefix}_signature_${name}`;
  const fail = (step: number | string, name: string, message: string): VerifyFailure => ({ ok: false, status: 401, code: code(name), message, step });

  return async function verify(req: WebhookRequest): Promise<VerifyResult> {
    const now = options.clock.now();
    const nowSec = Math.floor(now.getTime() / 1000);

    // 1. Parse the sig1 pair (and refuse every ambiguity a parser would silently resolve).
    let parsed: ParsedSignature;
    try {
      parsed = parseSignatureHeaders(req.headers.get('signature-input'), req.headers.get('signature'));
    } catch (error) {
      if (error instanceof HeaderMalformed) return fail(1, 'header_malformed', error.message);
      throw error;
    }
    const { params, components } = parsed;
    if (new Set(components).size !== components.length) return fail(1, 'header_malformed', 'a component is listed twice');
    for (const name of SINGLE_VALUED) {
      if (components.includes(name) && req.headers.get(name)?.includes(',')) return fail(1, 'header_malformed', `covered field ${name} has several values`);
    }
    const digestHeader = req.headers.get('content-digest');
    if (components.includes('content-digest') && digestHeader && hasDuplicateKeys(digestHeader)) {
      return fail(1, 'header_malformed', 'Content-Digest repeats a digest algorithm');
    }
    const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(req.url)?.[1] ?? '';
    // A raw U-label on the wire is ambiguous: the signer must send the A-label.
    if (/[^\x21-\x7e]/.test(authority)) return fail(1, 'header_malformed', 'the request authority is not ASCII');
    // 2. Every parameter present.
    if (params.created === undefined || params.expires === undefined || !params.nonce || !params.keyid || !params.alg || params.tag === undefined) {
      return fail(2, 'params_incomplete', 'created, expires, nonce, keyid, alg and tag are all required');
    }
    // 3. Tag, byte for byte.
    if (params.tag !== tag) return fail(3, 'tag_invalid', `tag must be ${tag}`);
    // 4. Algorithm.
    const alg = params.alg as SignatureAlg;
    if (!ALGS.includes(alg)) return fail(4, 'alg_not_allowed', `alg must be one of ${ALGS.join(', ')}`);
    // 5. Window.
    const { created, expires } = params;
    if (!(expires > created) || created > nowSec + CLOCK_SKEW_SECONDS || expires < nowSec - CLOCK_SKEW_SECONDS || expires - created > MAX_WINDOW_SECONDS) {
      return fail(5, 'window_invalid', 'signature is expired, not yet valid, or its window exceeds 300 s');
    }
    // 6. The profile's components are covered; the digest per policy.
    const required = [...profile.components];
    if (profile.contentTypeWithBody && req.body.byteLength > 0) required.push('content-type');
    if (profile.digest === 'required') required.push('content-digest');
    const missing = required.filter((c) => !components.includes(c));
    if (missing.length) return fail(6, 'components_incomplete', `uncovered components: ${missing.join(', ')}`);
    if (profile.digest === 'forbidden' && components.includes('content-digest')) {
      return fail(6, 'components_unexpected', 'this verifier does not accept content-digest coverage');
    }
    // 7. Resolve the key.
    const jwk = await options.keys.resolve(params.keyid);
    if (!jwk) return fail(7, 'key_unknown', `no published key ${params.keyid}`);
    // 8. Key purpose, and a key whose parameters are possible at all.
    const ops = jwk.key_ops;
    if (
      (jwk.use !== undefined && jwk.use !== 'sig') ||
      !Array.isArray(ops) ||
      !ops.includes('verify') ||
      !purposes.includes(String(jwk[useField])) ||
      !jwkConsistent(jwk)
    ) {
      return fail(8, 'key_purpose_invalid', `key ${params.keyid} is not a ${profile.prefix}-signing verification key`);
    }
    // 9. Revocation.
    if (options.revocation) {
      const state = await options.revocation.status(params.keyid, now);
      if (state === 'revoked') return fail(9, 'key_revoked', `key ${params.keyid} is revoked`);
      if (state === 'stale') return fail(9, 'revocation_stale', 'the revocation list has not been refreshed in time');
    }
    // 9a. Per-keyid replay-cache cap, before any cryptographic work.
    if ((await options.replay.count(params.keyid, now)) >= capOf(jwk)) {
      return fail('9a', 'rate_abuse', `too many live nonces for key ${params.keyid}`);
    }
    // 10. Signature over the canonical base.
    let base: string;
    try {
      base = signatureBase(components, parsed.paramsValue, req);
    } catch (error) {
      if (error instanceof TargetUriError) return { ok: false, status: 401, code: `${prefix}_target_uri_malformed`, message: error.message, step: 10 };
      if (error instanceof ComponentMissing) return fail(6, 'components_incomplete', error.message);
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
    if (!valid) return fail(10, 'invalid', 'signature does not verify');
    // 11. Content-Digest over the raw bytes, when covered.
    if (components.includes('content-digest') && !digestMatches(digestHeader, req.body)) {
      return fail(11, 'digest_mismatch', 'Content-Digest does not match the body');
    }
    // 12 + 13. Replay check and record in one atomic statement; kept until expires + 60 s.
    const keepUntil = new Date((Math.max(expires, nowSec) + CLOCK_SKEW_SECONDS) * 1000);
    if (!(await options.replay.record(params.keyid, params.nonce, keepUntil, now))) {
      return fail(12, 'replayed', 'nonce already used with this key');
    }
    // 14. The body must be JSON without duplicate keys.
    let payload: unknown;
    if (profile.strictJsonBody) {
      try {
        payload = parseStrictJsonBytes(req.body);
      } catch (error) {
        if (error instanceof StrictJsonError) return { ok: false, status: 401, code: `${prefix}_body_malformed`, message: error.message, step: 14 };
        throw error;
      }
    }
    return { ok: true, keyid: params.keyid, jwk, payload };
  };
}

/** The RFC 9421 webhook verifier: the pre-checks (413, 415), then the checklist of the webhook profile. */
export function createWebhookVerifier(options: VerifierOptions) {
  const verify = createVerifier(webhookProfile(options.namespace), options);
  return async function verifyWebhook(req: WebhookRequest): Promise<VerifyResult> {
    return precheck(req, options.maxBodyBytes) ?? verify(req);
  };
}

export type WebhookVerifier = ReturnType<typeof createWebhookVerifier>;

/** The 401 (or 413/415) answer for a failure. */
export function failureResponse(f: VerifyFailure, scheme = 'Signature'): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (f.status === 401) headers['www-authenticate'] = `${scheme} error="${f.code}"`;
  return new Response(JSON.stringify({ error: f.code, message: f.message }), { status: f.status, headers });
}
