import { naturalAccounts } from '../../lib/adcp/natural-accounts.ts';

/** The accounts content standards belong to (the governance agent has no sync_accounts: buyers declare them). */
export const { owningAccount, namedAccount } = naturalAccounts('content_standards_accounts', 'a standards configuration');
