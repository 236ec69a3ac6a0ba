import { defaultIds } from '../../core/ports/ids.ts';
import { Database } from '../../core/ports/database.ts';
import type { Deployment } from '../../core/deployment.ts';
import type { Tier } from '../../core/ports/auth.ts';
import { createApiKey, createOrganization, createUser } from '../../plugins/auth/store.ts';

let n = 0;
/** A fresh organization with one API key (optionally bound to a named user). */
export async function newKey(deployment: Deployment, tier: Tier = 'member', userName?: string): Promise<{ key: string; orgId: string; orgName: string }> {
  const db = deployment.get(Database);
  const org = await createOrganization(db, defaultIds, { name: `org-${process.pid}-${Date.now()}-${n++}`, tier });
  const user = userName ? await createUser(db, defaultIds, { orgId: org.id, name: userName }) : undefined;
  const { key } = await createApiKey(db, defaultIds, { orgId: org.id, name: 'test', userId: user?.id });
  return { key, orgId: org.id, orgName: org.name };
}
