import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { defineTask } from '../../core/task.ts';
import type { RightsDeps } from './deps.ts';
import { ownGrant } from './access.ts';
import { entityId, versionFields } from './schemas.ts';

/**
 * creative_approval: a creative made under a grant, submitted to the brand. Rejected when the grant
 * is revoked, paused or over; pending review when the right needs the brand's eye; approved
 * otherwise, with the right's content restrictions as conditions. The decision is recorded per
 * (grant, creative_url): a resubmission answers the same decision.
 */
export function creativeApprovalTask(deps: RightsDeps) {
  return defineTask({
    name: 'creative_approval',
    description:
      "Submit a creative made under one of your rights grants for the brand's approval: approved (with conditions), rejected (with the reason) or pending_review.",
    protocol: 'brand',
    requestSchema: 'brand/creative-approval-request.json',
    mutating: true,
    transactional: true,
    input: v.looseObject({
      ...versionFields,
      rights_id: entityId,
      creative_id: v.optional(entityId),
      creative_url: v.pipe(v.string('is required'), v.url('must be an absolute URL'), v.regex(/^https?:\/\//, 'must be an http(s) URL'), v.maxLength(2048)),
      creative_format: v.optional(v.looseObject({ agent_url: v.string(), id: v.string() })),
      metadata: v.optional(v.record(v.string(), v.unknown())),
    }),
    async handler(ctx) {
      const { input, clock } = ctx;
      const tx = ctx.tx ?? deps.db;
      const grant = await ownGrant(tx, ctx, input.rights_id);
      const right = deps.catalog.find((r) => r.rights_id === grant.rights_id);
      const today = clock.now().toISOString().slice(0, 10);
      const base: Record<string, string> = { rights_id: grant.grant_id, creative_url: input.creative_url };
      if (input.creative_id) base.creative_id = input.creative_id;
      let decision: { status: 'approved' | 'rejected' | 'pending_review'; reason?: string };
      if (grant.status === 'revoked') decision = { status: 'rejected', reason: `The licence was revoked: ${grant.revoked_reason ?? 'no reason given'}` };
      else if (grant.status === 'pending_approval') decision = { status: 'rejected', reason: "The licence awaits the rights holder's approval" };
      else if (grant.paused) decision = { status: 'rejected', reason: 'The licence is paused; resume it with update_rights' };
      else if (grant.terms.end_date && grant.terms.end_date < today) decision = { status: 'rejected', reason: `The licence ended on ${grant.terms.end_date}` };
      else if (right?.approval_required) decision = { status: 'pending_review' };
      else decision = { status: 'approved' };
      const now = clock.now();
      await tx.query(sql`INSERT INTO brand_rights_approvals (grant_id, creative_url, creative_id, status, reason, decided_at)
        VALUES (${grant.grant_id}::text, ${input.creative_url}::text, ${input.creative_id ?? null}::text, ${decision.status}::text, ${decision.reason ?? null}::text, ${now}::timestamptz)
        ON CONFLICT (grant_id, creative_url) DO UPDATE SET status = EXCLUDED.status, reason = EXCLUDED.reason, creative_id = EXCLUDED.creative_id, decided_at = EXCLUDED.decided_at`);
      if (decision.status === 'rejected')
        return { ...base, approval_status: 'rejected', reason: decision.reason!, suggestions: ['Acquire or update a licence that covers this creative'] };
      if (decision.status === 'pending_review') return { ...base, approval_status: 'pending_review', estimated_response_time: 'P2D' };
      return {
        ...base,
        approval_status: 'approved',
        approved_at: now.toISOString(),
        ...(right?.content_restrictions?.length ? { conditions: right.content_restrictions } : {}),
      };
    },
  });
}
