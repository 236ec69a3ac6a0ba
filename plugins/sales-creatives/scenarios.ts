import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import { formatKey } from '../../lib/adcp/format-ids.ts';
import { REFERENCE_CREATIVE_AGENT } from '../../lib/adcp/reference-formats.ts';
import type { CreativesDeps } from './deps.ts';

const id = v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128));
/** Ids of seeded fixtures (the test-seeds' pattern). */
const fixtureId = v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
const CREATIVE_STATUSES = ['processing', 'pending_review', 'approved', 'rejected', 'archived'] as const;

/**
 * The caller's creative a scenario changes, locked: in the named account, else its only account holding
 * that id; refused outside a sandbox (the scenario's error states the creative's status).
 */
async function lockSandboxCreative(
  deps: CreativesDeps,
  tx: Queryable,
  owner: string,
  params: { creative_id: string; account_id?: string },
): Promise<{ account_id: string; status: string }> {
  const rows = await tx.query<{ account_id: string; status: string }>(sql`SELECT c.account_id, c.status FROM sales_creatives c
    WHERE c.owner = ${owner}::text AND c.creative_id = ${params.creative_id}::text
    ${params.account_id ? sql`AND c.account_id = ${params.account_id}::text` : sql.empty} FOR UPDATE OF c`);
  if (!rows.length) throw new ScenarioError('NOT_FOUND', `No creative ${params.creative_id} in your libraries`, null);
  if (rows.length > 1) throw new ScenarioError('INVALID_PARAMS', `Creative ${params.creative_id} is in several accounts: name account_id`);
  const c = rows[0]!;
  const [account] = await deps.accounts.byIds(tx, [c.account_id]);
  if (!account?.sandbox && !deps.options.sandbox) throw new ScenarioError('FORBIDDEN', 'The creative is not in a sandbox account', c.status);
  return c;
}

/** Sandbox scenarios of the creative library (comply_test_controller): a creative's review status, its purge, a creative of a chosen id. */
export function creativeScenarios(deps: CreativesDeps): TestScenario[] {
  return [
    defineScenario({
      name: 'force_creative_status',
      protocol: 'media_buy',
      // The library is the creative agent's too (CreativeStore): its mounts serve it.
      servedWith: ['creative'],
      description: "Set the review status of a creative in a sandbox account's library",
      params: v.object({
        creative_id: id,
        account_id: v.optional(id),
        status: v.picklist(CREATIVE_STATUSES, `must be one of ${CREATIVE_STATUSES.join(', ')}`),
        rejection_reason: v.optional(v.pipe(v.string(), v.maxLength(500))),
      }),
      async run({ params, principal }) {
        return deps.db.transaction(async (tx) => {
          const c = await lockSandboxCreative(deps, tx, principal.orgId, params);
          await tx.query(sql`UPDATE sales_creatives SET status = ${params.status}::text, updated_at = ${deps.clock.now()}::timestamptz
            WHERE account_id = ${c.account_id}::text AND creative_id = ${params.creative_id}::text`);
          return { kind: 'transition', previous_state: c.status, current_state: params.status };
        });
      },
    }),
    defineScenario({
      name: 'force_creative_purge',
      protocol: 'media_buy',
      servedWith: ['creative'],
      description:
        "Remove a creative from a sandbox account's library for good, with its package assignments: params {creative_id, account_id?, reason_code?, reason_detail?}",
      params: v.object({
        creative_id: id,
        account_id: v.optional(id),
        reason_code: v.optional(v.pipe(v.string(), v.maxLength(64))),
        reason_detail: v.optional(v.pipe(v.string(), v.maxLength(500))),
      }),
      async run({ params, principal }) {
        return deps.db.transaction(async (tx) => {
          const c = await lockSandboxCreative(deps, tx, principal.orgId, params);
          // Assignments go with it (ON DELETE CASCADE): the buyer sees the creative gone from list_creatives and from its packages.
          await tx.query(sql`DELETE FROM sales_creatives WHERE account_id = ${c.account_id}::text AND creative_id = ${params.creative_id}::text`);
          return {
            kind: 'transition',
            previous_state: c.status,
            current_state: 'purged',
            message: `Creative ${params.creative_id} purged${params.reason_detail ? `: ${params.reason_detail}` : ''}`,
          };
        });
      },
    }),
    defineScenario({
      name: 'seed_creative',
      protocol: 'media_buy',
      // The library is the creative agent's too (CreativeStore): its mounts serve it.
      servedWith: ['creative'],
      description: "Add a creative to the caller's sandbox library with a chosen id: params {creative_id, fixture: {format_id: {id}, status, name}}",
      params: v.object({
        creative_id: fixtureId,
        fixture: v.optional(
          v.looseObject({
            format_id: v.optional(
              v.looseObject({ id: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,128}$/)), agent_url: v.optional(v.pipe(v.string(), v.url())) }),
            ),
            status: v.optional(v.picklist(CREATIVE_STATUSES, `must be one of ${CREATIVE_STATUSES.join(', ')}`), 'approved'),
            name: v.optional(v.pipe(v.string(), v.maxLength(256))),
          }),
          {},
        ),
      }),
      async run({ params, principal, account }) {
        const fx = params.fixture;
        const format = { agent_url: fx.format_id?.agent_url ?? REFERENCE_CREATIVE_AGENT, id: fx.format_id?.id ?? 'display_300x250' };
        return deps.db.transaction(async (tx) => {
          const acc = await deps.accounts.sandboxFixture(tx, principal.orgId, account);
          const now = deps.clock.now();
          await tx.query(sql`
            INSERT INTO sales_creatives (account_id, creative_id, owner, name, format_id, format_key, assets, status, created_at, updated_at)
            VALUES (${acc.account_id}::text, ${params.creative_id}::text, ${principal.orgId}::text, ${fx.name ?? params.creative_id}::text, ${format}::jsonb,
                    ${formatKey(format)}::text, '{}'::jsonb, ${fx.status}::text, ${now}::timestamptz, ${now}::timestamptz)
            ON CONFLICT (account_id, creative_id) DO UPDATE SET format_id = EXCLUDED.format_id, format_key = EXCLUDED.format_key,
              status = EXCLUDED.status, name = EXCLUDED.name, updated_at = EXCLUDED.updated_at`);
          return { kind: 'seed', message: `Sandbox creative ${params.creative_id} (${fx.status})` };
        });
      },
    }),
  ];
}
