import { naturalAccounts } from '../../lib/adcp/natural-accounts.ts';

/** The accounts lists belong to (the governance agent has no sync_accounts: buyers declare them). */
export const { owningAccount, namedAccount } = naturalAccounts('governance_list_accounts', 'a list');
