import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { SignerPort } from '../../core/ports/signer.ts';
import type { Json } from '../../core/task.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
import type { ListsDeps } from './deps.ts';
import type { KindSpec } from './kinds.ts';
import { cacheValidUntil } from './render.ts';
import type { ListRow } from './store.ts';

/** A webhook_url is only taken where webhooks can be sent. */
export function checkWebhookSupported(deps: ListsDeps, url: string | undefined): void {
  if (url && !deps.outbox) {
    throw new ProtocolError('INVALID_REQUEST', 'webhook_url: webhooks are not enabled on this agent', { field: 'webhook_url' });
  }
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const JWS_ALG = { ed25519: 'EdDSA', 'ecdsa-p256-sha256': 'ES256' } as const;

/**
 * The payload's `signature`: a detached compact JWS (RFC 7515 appendix F) with the agent's active
 * webhook-signing key (published in its JWKS), over the canonical JSON of the payload without
 * `signature`. The delivery itself is also signed (RFC 9421) by the webhook outbox.
 */
async function signPayload(signer: SignerPort | undefined, payload: Json): Promise<string> {
  if (!signer) return '';
  const key = signer.active();
  const header = b64url(JSON.stringify({ alg: JWS_ALG[key.alg], kid: key.keyid, typ: 'JWT' }));
  const body = b64url(canonicalJson(payload));
  const signature = await key.sign(new TextEncoder().encode(`${header}.${body}`));
  return `${header}..${b64url(signature)}`;
}

/**
 * Queue the `*_list_changed` webhook of a list whose resolved content changed, in the caller's
 * transaction (the change and its notification commit together). Summary only: receivers
 * re-fetch the list with get_*_list.
 */
export async function notifyChange(
  tx: Queryable,
  deps: ListsDeps,
  spec: KindSpec,
  list: ListRow,
  change: { added: number; removed: number; total: number },
): Promise<void> {
  if (!list.webhook_url || !deps.outbox) return;
  const key = `${spec.kind}-list-changed-${deps.ids.uuid4()}`;
  const at = list.updated_at;
  const payload: Json = {
    idempotency_key: key,
    event: spec.event,
    list_id: list.list_id,
    list_name: list.name,
    change_summary: { [spec.summary.added]: change.added, [spec.summary.removed]: change.removed, [spec.summary.total]: change.total },
    resolved_at: at.toISOString(),
    cache_valid_until: cacheValidUntil(spec, at),
  };
  payload.signature = await signPayload(deps.signer, payload);
  await deps.outbox.enqueue(tx, {
    url: list.webhook_url,
    auth: { mode: 'rfc9421' },
    format: 'mcp',
    idempotencyKey: key,
    body: JSON.stringify(payload),
    activity: { owner: list.owner, subject: list.list_id, notificationType: spec.event },
  });
}
