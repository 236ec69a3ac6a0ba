import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { WebhookAuth } from '../../core/ports/webhook-outbox.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { RightsDeps } from './deps.ts';
import { RIGHT_USES } from './catalog.ts';
import type { PushConfig } from './schemas.ts';
import { grantOf, updateGrant, type GrantRow } from './store.ts';

/** How the buyer's revocation_webhook authenticates us: its legacy scheme when it names one, RFC 9421 signatures otherwise. */
function authOf(config: PushConfig): WebhookAuth {
  const a = config.authentication;
  if (!a) return { mode: 'rfc9421' };
  return a.schemes[0] === 'HMAC-SHA256' ? { mode: 'hmac', secret: a.credentials } : { mode: 'bearer', token: a.credentials };
}

/**
 * Revoke a grant and notify the buyer (brand/revocation-notification.json) through the webhook
 * outbox, in the same transaction: the notification exists exactly when the revocation commits,
 * and is delivered (signed) at least once with the same idempotency key.
 */
export async function revokeGrant(deps: RightsDeps, tx: Queryable, grant: GrantRow, reason: string, now: Date, revokedUses?: string[]): Promise<void> {
  await updateGrant(tx, { ...grant, status: 'revoked', revoked_reason: reason, updated_at: now });
  if (!deps.outbox) return;
  const config = grant.revocation_webhook as unknown as PushConfig;
  const idempotencyKey = `revoke_${grant.grant_id}`;
  const body = {
    idempotency_key: idempotencyKey,
    rights_id: grant.grant_id,
    brand_id: grant.brand_id,
    reason,
    effective_at: now.toISOString(),
    ...(revokedUses?.length ? { revoked_uses: revokedUses } : {}),
  };
  await deps.outbox.enqueue(tx, {
    url: config.url,
    auth: authOf(config),
    format: 'mcp',
    idempotencyKey,
    body: JSON.stringify(body),
    ...(config.operation_id ? { operationId: config.operation_id } : {}),
    activity: { owner: grant.owner, subject: grant.grant_id, notificationType: 'rights_revocation' },
  });
}

/** `force_rights_revoked`: the brand revokes one of the caller's grants of a sandbox account now, sending the revocation webhook. */
export function forceRightsRevoked(deps: RightsDeps, clock: ClockPort): TestScenario {
  return defineScenario({
    name: 'force_rights_revoked',
    protocol: 'brand',
    description: 'Revoke a rights grant of yours as the brand would: params {rights_id, reason?, revoked_uses?}; the revocation webhook is sent',
    params: v.object({
      rights_id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be a rights_id acquire_rights answered')),
      reason: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(500)), 'Revoked by the brand (sandbox)'),
      revoked_uses: v.optional(v.pipe(v.array(v.picklist(RIGHT_USES)), v.minLength(1))),
    }),
    async run({ params, principal }) {
      return deps.db.transaction(async (tx) => {
        const grant = await grantOf(tx, principal.orgId, params.rights_id, true);
        if (!grant) throw new ScenarioError('NOT_FOUND', `No rights grant ${params.rights_id} of yours`, null);
        if (grant.status === 'revoked') throw new ScenarioError('INVALID_TRANSITION', 'The grant is revoked already', 'revoked');
        const [account] = await tx.query<{ sandbox: boolean }>(sql`SELECT sandbox FROM brand_rights_accounts WHERE account_id = ${grant.account_id}::text`);
        if (!account?.sandbox) throw new ScenarioError('FORBIDDEN', 'Only grants of sandbox accounts ({..., sandbox: true}) can be forced', grant.status);
        await revokeGrant(deps, tx, grant, params.reason, clock.now(), params.revoked_uses);
        return { kind: 'transition', previous_state: grant.status, current_state: 'revoked' };
      });
    },
  });
}
