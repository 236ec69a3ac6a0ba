import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { RightsDeps } from './deps.ts';
import { resolveAccount, setGovernance } from './accounts.ts';
import { accountRef, versionFields } from './schemas.ts';

const agent = v.strictObject(
  {
    url: v.pipe(v.string('must be a string'), v.url('must be an absolute URL'), v.regex(/^https:\/\//, 'must be an https URL'), v.maxLength(2048)),
    authentication: v.strictObject({
      schemes: v.pipe(v.array(v.picklist(['Bearer', 'HMAC-SHA256'], 'must be Bearer or HMAC-SHA256')), v.minLength(1), v.maxLength(1)),
      credentials: v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'), v.maxLength(4096)),
    }),
    // 3.1 drafts name the spend categories an agent governs; accepted, not kept.
    categories: v.optional(v.array(v.string())),
  },
  'must be an object {url, authentication}',
);

/**
 * sync_governance on the brand agent: which governance agent approves each account's rights
 * licences. Rights acquired under a synced account are checked with governance first. The
 * credentials are not echoed. All entries are validated before any is written.
 */
export function syncGovernanceTask(deps: RightsDeps) {
  return defineTask({
    name: 'sync_governance',
    description: 'Register the governance agent of each of your accounts: acquire_rights under a governed account is checked with it first.',
    protocol: 'brand',
    requestSchema: 'account/sync-governance-request.json',
    mutating: true,
    transactional: true,
    input: v.looseObject({
      ...versionFields,
      accounts: v.pipe(
        v.array(
          v.strictObject({ account: accountRef, governance_agents: v.pipe(v.array(agent), v.minLength(1), v.maxLength(1, 'accepts one governance agent')) }),
        ),
        v.minLength(1, 'must not be empty'),
        v.maxLength(100, 'accepts at most 100 accounts'),
      ),
    }),
    async handler({ input, principal, clock, ids, tx }) {
      const q = tx ?? deps.db;
      const out: Json[] = [];
      for (const entry of input.accounts) {
        const url = entry.governance_agents[0]!.url;
        try {
          const account = await resolveAccount(q, { clock, ids }, principal.orgId, entry.account);
          await setGovernance(q, account.account_id, url, clock.now());
          out.push({ account: entry.account as unknown as Json, status: 'synced', governance_agents: [{ url }] });
        } catch (error) {
          if (!(error instanceof ProtocolError) || error.code !== 'ACCOUNT_NOT_FOUND') throw error;
          out.push({ account: entry.account as unknown as Json, status: 'failed', errors: [{ code: error.code, message: error.message, field: 'account' }] });
        }
      }
      return { accounts: out };
    },
  });
}
