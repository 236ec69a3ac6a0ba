import { Database } from '../../core/ports/database.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { databaseContract } from './database.contract.ts';

// storage-pglite and storage-postgres, each through its plugin in a deployment.
forEachAdapter('database contract', (adapter) =>
  databaseContract(`storage-${adapter}`, async () => {
    const d = await deploy(adapter, []);
    return {
      port: d.deployment.get(Database),
      async another() {
        const other = await deploy(adapter, [], { schema: d.schema! });
        return { port: other.deployment.get(Database), close: () => other.close() };
      },
      close: () => d.close(),
    };
  }),
);
