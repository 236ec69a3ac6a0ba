import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import { accountRef, versionFields } from '../../lib/adcp/request-fields.ts';
import { resolveAccount, type AccountsDeps } from './store.ts';

const agent = v.strictObject(
  {
    url: v.pipe(v.string('must be a string'), v.maxLength(2048), v.url('must be an absolute URL'), v.regex(/^https:\/\//, 'must be an https URL')),
    authentication: v.strictObject(
      {
        schemes: v.pipe(v.array(v.picklist(['Bearer', 'HMAC-SHA256'], 'must be Bearer or HMAC-SHA256')), v.length(1, 'must name exactly one scheme')),
        credentials: v.pipe(v.string('must be a string'), v.minLength(32, 'must be at least 32 characters'), v.maxLength(4096)),
      },
      'must be {schemes, credentials}',
    ),
    // 3.0.6 only: the categories the agent handles (kept, not used: one agent governs the account).
    categories: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a lowercase category id'))), v.maxLength(20))),
  },
  'must be {url, authentication}',
);

/**
 * sync_governance: the buyer names, per account, the governance agent that governs its spend. The
 * seller's governance checks (create_media_buy with a plan_id) then consult that agent, with the
 * credential given here, instead of the deployment's. One agent per account (3.1: exactly one).
 * An account the caller does not have fails on its own entry; the others are synced.
 */
export function syncGovernanceTask(deps: AccountsDeps) {
  return defineTask({
    name: 'sync_governance',
    description:
      "Record, per account, the governance agent (https url and the credential this seller presents) that governs the account's media buys; answers each account's status (synced or failed).",
    protocol: 'media_buy',
    requestSchema: 'account/sync-governance-request.json',
    mutating: true,
    transactional: true,
    input: v.looseObject({
      ...versionFields,
      accounts: v.pipe(
        v.array(
          v.strictObject(
            {
              account: accountRef,
              governance_agents: v.pipe(v.array(agent, 'must be an array'), v.length(1, 'must name exactly one governance agent')),
            },
            'must be {account, governance_agents}',
          ),
          'must be an array',
        ),
        v.minLength(1, 'must not be empty'),
        v.maxLength(100, 'accepts at most 100 accounts'),
      ),
    }),
    async handler({ input, principal, clock, tx }) {
      const q = tx ?? deps.db;
      const out: Json[] = [];
      for (const entry of input.accounts) {
        const a = entry.governance_agents[0]!;
        const scheme = a.authentication.schemes[0]!;
        try {
          if (scheme !== 'Bearer') {
            throw new ProtocolError('UNSUPPORTED_FEATURE', `${scheme}: this seller authenticates to governance agents with Bearer only`, {
              field: 'authentication.schemes',
            });
          }
          const account = await resolveAccount(deps, q, principal.orgId, entry.account);
          const stored = deps.box ? await deps.box.seal(a.authentication.credentials) : a.authentication.credentials;
          await q.query(sql`INSERT INTO account_governance_agents (account_id, url, scheme, credentials, categories, updated_at)
            VALUES (${account.account_id}::text, ${a.url}::text, ${scheme}::text, ${stored}::text, ${a.categories ?? null}::jsonb, ${clock.now()}::timestamptz)
            ON CONFLICT (account_id) DO UPDATE SET url = EXCLUDED.url, scheme = EXCLUDED.scheme, credentials = EXCLUDED.credentials,
              categories = EXCLUDED.categories, updated_at = EXCLUDED.updated_at`);
          out.push({ account: entry.account, status: 'synced', governance_agents: [{ url: a.url }] });
        } catch (error) {
          if (!(error instanceof ProtocolError)) throw error;
          out.push({ account: entry.account, status: 'failed', errors: [{ code: error.code, message: error.message }] });
        }
      }
      return { accounts: out };
    },
  });
}
