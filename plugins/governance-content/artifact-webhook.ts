import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { protocolErrorResponse, type HttpRoute } from '../../core/http.ts';
import { authenticateRequest, type AuthPort } from '../../core/ports/auth.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { ContentDeps } from './deps.ts';
import { artifact, dateTime, nonEmpty } from './schemas.ts';
import { upsertArtifact } from './store.ts';

/** Bodies above this are refused before parsing (a batch of 1,000 rich artifacts fits). */
const MAX_BYTES = 8 * 1024 * 1024;

/** content-standards/artifact-webhook-payload.json */
const payload = v.looseObject({
  idempotency_key: v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z0-9_.:-]{16,255}$/, 'must match ^[A-Za-z0-9_.:-]{16,255}$')),
  media_buy_id: nonEmpty(256),
  batch_id: nonEmpty(256),
  timestamp: dateTime,
  artifacts: v.pipe(
    v.array(
      v.looseObject({ artifact, delivered_at: dateTime, impression_id: v.optional(nonEmpty(256)), package_id: v.optional(nonEmpty(256)) }),
      'must be an array',
    ),
    v.maxLength(1000, 'accepts at most 1000 artifacts a batch'),
  ),
});

const json = (status: number, body: unknown) => Response.json(body, { status, headers: { 'cache-control': 'no-store' } });

/**
 * The artifact webhook, receive side: `POST /content-standards/artifacts` takes an
 * artifact-webhook-payload (a seller's push of delivered content, or an orchestrator forwarding
 * one) from an authenticated caller and records its artifacts for that caller's media buy, where
 * get_media_buy_artifacts finds them. A record is keyed by impression_id (else batch_id and
 * position), so a re-delivered batch replaces itself instead of adding duplicates.
 */
export function artifactWebhookRoute(deps: ContentDeps, auth: AuthPort | undefined): HttpRoute {
  return {
    method: 'POST',
    path: '/content-standards/artifacts',
    async handle(request) {
      try {
        const principal = (await authenticateRequest(auth, request.headers.get('authorization'), 'required'))!;
        if (Number(request.headers.get('content-length') ?? 0) > MAX_BYTES) throw new ProtocolError('INVALID_REQUEST', 'body: too large', { status: 413 });
        const text = await request.text();
        if (text.length > MAX_BYTES) throw new ProtocolError('INVALID_REQUEST', 'body: too large', { status: 413 });
        let raw: unknown;
        try {
          raw = JSON.parse(text);
        } catch {
          throw new ProtocolError('INVALID_REQUEST', 'body: must be JSON (an artifact-webhook-payload)');
        }
        const p = parseOrThrow(payload, raw);
        await deps.db.transaction(async (tx) => {
          for (const [i, a] of p.artifacts.entries()) {
            await upsertArtifact(tx, {
              owner: principal.orgId,
              account_id: null,
              media_buy_id: p.media_buy_id,
              record_id: a.impression_id ?? `${p.batch_id}:${i}`,
              package_id: a.package_id ?? null,
              delivered_at: new Date(a.delivered_at),
              country: null,
              channel: null,
              artifact: a.artifact,
              local_verdict: null,
            });
          }
        });
        return json(200, { status: 'accepted', media_buy_id: p.media_buy_id, batch_id: p.batch_id, recorded: p.artifacts.length });
      } catch (error) {
        if (!(error instanceof ProtocolError)) throw error;
        return protocolErrorResponse(error);
      }
    },
  };
}
