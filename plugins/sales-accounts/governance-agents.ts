import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import type { AccountGovernanceAgent } from '../../core/ports/sales-accounts.ts';

/** The governance agent synced for an account (sync_governance), its credential opened. */
export async function governanceAgentOf(box: SecretBoxPort | undefined, q: Queryable, accountId: string): Promise<AccountGovernanceAgent | undefined> {
  const [row] = await q.query<{ url: string; scheme: string; credentials: string }>(
    sql`SELECT url, scheme, credentials FROM account_governance_agents WHERE account_id = ${accountId}::text`,
  );
  if (!row) return undefined;
  return { url: row.url, scheme: row.scheme, credentials: box ? await box.open(row.credentials) : row.credentials };
}
