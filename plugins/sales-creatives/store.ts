import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { CreativeStorePort, LibraryCreative } from '../../core/ports/creative-store.ts';
import { accountRef, type AccountRef } from '../../lib/adcp/request-fields.ts';
import type { CreativesDeps } from './deps.ts';

/** The account `ref` names; null for a sandbox `account_id` nobody created (see CreativeStorePort.accountId). */
export async function libraryAccountId(
  deps: Pick<CreativesDeps, 'db' | 'accounts' | 'options'>,
  owner: string,
  ref: AccountRef,
  field: string,
): Promise<string | null> {
  try {
    return (await deps.accounts.resolve(deps.db, owner, ref, field)).account_id;
  } catch (error) {
    if (deps.options.sandbox && 'account_id' in ref && error instanceof ProtocolError && error.code === 'ACCOUNT_NOT_FOUND') return null;
    throw error;
  }
}

/** The CreativeStore port over this plugin's table: the creative agent's ad server reads the same library. */
export function createCreativeStore(deps: Pick<CreativesDeps, 'db' | 'accounts' | 'options'>): CreativeStorePort {
  return {
    async accountId(owner, account, field) {
      const ref = v.safeParse(accountRef, account);
      if (!ref.success) throw new ProtocolError('INVALID_REQUEST', `${field}: must be {account_id} or {brand: {domain}, operator}`, { field });
      return libraryAccountId(deps, owner, ref.output, field);
    },
    async find(owner, creativeIds, accountId) {
      if (!creativeIds.length) return [];
      return deps.db.query<LibraryCreative>(sql`
        SELECT account_id, creative_id, name, format_id, assets, status, tags FROM sales_creatives
        WHERE owner = ${owner}::text AND creative_id = ANY(${[...creativeIds]}::text[])
        ${accountId ? sql`AND account_id = ${accountId}::text` : sql.empty}
        ORDER BY created_at, account_id, creative_id`);
    },
  };
}
