import { ProtocolError } from '../../core/errors.ts';
import type { Principal } from '../../core/ports/auth.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { namedAccount } from './accounts.ts';
import type { KindSpec } from './kinds.ts';
import type { AccountRef } from './schemas.ts';
import { loadList, type ListRow } from './store.ts';
import { tokenMatches } from './tokens.ts';

/** The caller without a credential (an `optional` task run anonymously). */
export const isAnonymous = (p: Principal) => p.id === 'anonymous' && p.tier === 'public';

export const listNotFound = (spec: KindSpec, listId: string) =>
  new ProtocolError('REFERENCE_NOT_FOUND', `No ${spec.noun.replace('_', ' ')} ${listId.slice(0, 128)} for this caller`, {
    status: 404,
    field: 'list_id',
    details: { code: `${spec.noun.toUpperCase()}_NOT_FOUND` },
  });

/**
 * A list its owner names: the caller's organization owns it and, when the request names an
 * account, that account does. Anything else (another organization's list, another account's) is
 * not found: existence is not disclosed.
 */
export async function ownedList(q: Queryable, spec: KindSpec, principal: Principal, listId: string, account: AccountRef | undefined): Promise<ListRow> {
  const row = await loadList(q, spec.kind, listId);
  if (!row || row.owner !== principal.orgId) throw listNotFound(spec, listId);
  const accountId = await namedAccount(q, principal.orgId, account);
  if (accountId !== undefined && accountId !== row.account_id) throw listNotFound(spec, listId);
  return row;
}

/**
 * A list a reader may fetch: its owner (as ownedList), or anyone presenting the list's auth_token
 * (sellers the buyer shared it with, with their own credential or none). Returns whether the
 * reader is the owner.
 */
export async function readableList(
  q: Queryable,
  spec: KindSpec,
  principal: Principal,
  listId: string,
  account: AccountRef | undefined,
  token: string | undefined,
): Promise<{ row: ListRow; owner: boolean }> {
  if (token !== undefined) {
    const row = await loadList(q, spec.kind, listId);
    if (row && tokenMatches(token, row.token_hash)) return { row, owner: row.owner === principal.orgId };
    throw listNotFound(spec, listId);
  }
  if (isAnonymous(principal)) {
    throw new ProtocolError('AUTH_REQUIRED', `Send your credential (Authorization: Bearer), or the list's auth_token in auth_token`, {
      field: 'auth_token',
    });
  }
  return { row: await ownedList(q, spec, principal, listId, account), owner: true };
}
