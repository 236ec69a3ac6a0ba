import { ProtocolError } from '../../core/errors.ts';
import type { Principal } from '../../core/ports/auth.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { namedAccount } from './accounts.ts';
import type { AccountRef } from './schemas.ts';
import { loadStandards, type StandardsRow } from './store.ts';

export const standardsNotFound = (standardsId: string) =>
  new ProtocolError('REFERENCE_NOT_FOUND', `No content standards ${standardsId.slice(0, 128)} for this caller`, {
    status: 404,
    field: 'standards_id',
    details: { code: 'STANDARDS_NOT_FOUND' },
  });

/**
 * A configuration its owner names: the caller's organization owns it and, when the request names
 * an account, that account does. Anything else is not found: existence is not disclosed.
 */
export async function ownedStandards(q: Queryable, principal: Principal, standardsId: string, account: AccountRef | undefined): Promise<StandardsRow> {
  const row = await loadStandards(q, standardsId);
  if (!row || row.owner !== principal.orgId) throw standardsNotFound(standardsId);
  const accountId = await namedAccount(q, principal.orgId, account);
  if (accountId !== undefined && accountId !== row.account_id) throw standardsNotFound(standardsId);
  return row;
}
