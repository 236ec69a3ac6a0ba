import { Database } from '../../core/ports/database.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import auth from '../../plugins/auth/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { discoveryContract } from './discovery.contract.ts';

// plugins/registry-agents (with search-postgres for its profiles) on each adapter.
forEachAdapter('discovery contract', (adapter) =>
  discoveryContract(`registry-agents [${adapter}]`, async () => {
    const d = await deploy(adapter, [auth(), searchPostgres(), registryAgents()]);
    return { port: d.deployment.get(Discovery), db: d.deployment.get(Database), close: () => d.close() };
  }),
);
