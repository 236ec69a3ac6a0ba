import type { SignedRequest } from '../../core/ports/request-verifier.ts';
import { createVerifier, requestProfile, type DigestPolicy, type VerifierOptions, type VerifyFailure, type WebhookRequest } from './verify.ts';

/** The `request_signing` policy an agent publishes in its capabilities. */
export interface RequestSigningPolicy {
  /** `covers_content_digest`. */
  coversContentDigest: DigestPolicy;
  /** Operations (task names) refused unsigned with `request_signature_required`. */
  requiredFor: readonly string[];
}

export type RequestVerifyResult = { ok: true; signed: false } | { ok: true; signed: true; keyid: string } | VerifyFailure;

/**
 * The request-signing verifier: pre-check 0 (an unsigned request to an operation the policy
 * requires, or one registering webhook credentials, is `request_signature_required`; any other
 * unsigned request passes), then the shared checklist with the request profile. A present but
 * broken signature is never treated as absent (downgrade protection).
 */
export function createRequestVerifier(options: VerifierOptions & { policy: RequestSigningPolicy }) {
  const verify = createVerifier(requestProfile(options.namespace, options.policy.coversContentDigest), options);
  const required = new Set(options.policy.requiredFor);
  return async function verifyRequest(
    req: WebhookRequest,
    context: { operations: readonly string[]; webhookCredentials: boolean },
  ): Promise<RequestVerifyResult> {
    if (!req.headers.has('signature') && !req.headers.has('signature-input')) {
      if (context.webhookCredentials || context.operations.some((op) => required.has(op))) {
        const why = context.webhookCredentials
          ? 'a push registration carrying authentication'
          : `operation ${context.operations.find((op) => required.has(op))}`;
        return { ok: false, status: 401, code: 'request_signature_required', message: `${why} requires a signed request`, step: 0 };
      }
      return { ok: true, signed: false };
    }
    const result = await verify(req);
    return result.ok ? { ok: true, signed: true, keyid: result.keyid } : result;
  };
}

export type RequestVerifierFn = ReturnType<typeof createRequestVerifier>;

/**
 * The request as its signer addressed it: the configured public URL replaces the listener's origin.
 * The URL is worked out when read (only a verifier reads it; most deployments have none).
 */
class AddressedRequest implements SignedRequest {
  private address: string | undefined;

  constructor(
    private readonly publicUrl: string | undefined,
    private readonly request: Request,
    readonly body: Uint8Array,
  ) {}

  get method(): string {
    return this.request.method;
  }

  get headers(): Headers {
    return this.request.headers;
  }

  get url(): string {
    if (this.address === undefined) {
      const { publicUrl, request } = this;
      if (publicUrl) {
        const u = new URL(request.url);
        this.address = publicUrl.replace(/\/+$/, '') + u.pathname + u.search;
      } else this.address = request.url;
    }
    return this.address;
  }
}

export function signedRequest(publicUrl: string | undefined, request: Request, body: Uint8Array): SignedRequest {
  return new AddressedRequest(publicUrl, request, body);
}

/** A push registration carrying legacy credentials: AdCP requires such requests to be signed. */
export function carriesWebhookCredentials(input: unknown): boolean {
  const push = input && typeof input === 'object' ? (input as Record<string, any>).push_notification_config : undefined;
  return !!push && typeof push === 'object' && push.authentication !== undefined;
}
