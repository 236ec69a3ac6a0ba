import { defaultIds } from '../../core/ports/ids.ts';
import { Auth } from '../../core/ports/auth.ts';
import { Database } from '../../core/ports/database.ts';
import auth from '../../plugins/auth/index.ts';
import { createApiKey, createOrganization, createUser, revokeApiKey } from '../../plugins/auth/store.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { authContract } from './auth.contract.ts';

const TEST_TOKEN = 'auth-contract-test-token-0123456789';

// plugins/auth on each adapter: organization API keys (issued as the admin CLI does) and a configured test token.
forEachAdapter('auth contract', (adapter) =>
  authContract(`auth [${adapter}]`, async () => {
    const d = await deploy(adapter, [auth({ testTokens: [{ token: TEST_TOKEN, tier: 'admin' }] })]);
    const db = d.deployment.get(Database);
    let n = 0;
    return {
      port: d.deployment.get(Auth),
      configured: { credential: TEST_TOKEN, tier: 'admin' },
      async issue(tier, userName) {
        const org = await createOrganization(db, defaultIds, { name: `auth-contract-${process.pid}-${n++}`, tier });
        const user = userName ? await createUser(db, defaultIds, { orgId: org.id, name: userName }) : undefined;
        const { id, key } = await createApiKey(db, defaultIds, { orgId: org.id, name: 'contract', userId: user?.id });
        return { credential: key, orgId: org.id, revoke: async () => void (await revokeApiKey(db, id)) };
      },
      close: () => d.close(),
    };
  }),
);
