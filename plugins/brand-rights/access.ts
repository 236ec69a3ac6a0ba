import type * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { findAccount } from './accounts.ts';
import type { accountRef } from './schemas.ts';
import { grantOf, type GrantRow } from './store.ts';

export const grantNotFound = (id: string, field = 'rights_id') =>
  new ProtocolError('REFERENCE_NOT_FOUND', `No rights grant ${id.slice(0, 128)} of this caller: use the rights_id acquire_rights answered`, {
    status: 404,
    field,
  });

/** The caller's grant a request names (narrowed to `account` when given), locked for change; another organization's is not found. */
export async function ownGrant(
  tx: Queryable,
  ctx: { principal: { orgId: string } },
  grantId: string,
  account?: v.InferOutput<typeof accountRef>,
): Promise<GrantRow> {
  const grant = await grantOf(tx, ctx.principal.orgId, grantId, true);
  if (!grant) throw grantNotFound(grantId);
  if (account) {
    // Looked up, never provisioned: naming an account the caller does not have finds no grant.
    const named = await findAccount(tx, ctx.principal.orgId, account);
    if (named?.account_id !== grant.account_id) throw grantNotFound(grantId);
  }
  return grant;
}
