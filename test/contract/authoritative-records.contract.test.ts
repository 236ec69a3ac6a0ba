import { Database } from '../../core/ports/database.ts';
import { AdagentsRecords, BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { forEachAdapter } from '../support/deploy.ts';
import { registryEntries } from '../support/registry-entries.ts';
import { authoritativeRecordsContract } from './authoritative-records.contract.ts';

// The port is shared: registry-brands records brand.json, registry-properties records adagents.json.
forEachAdapter('authoritative records contract', (adapter) => {
  for (const [plugin, token, resource] of [
    ['registry-brands', BrandJsonRecords, 'brands'],
    ['registry-properties', AdagentsRecords, 'properties'],
  ] as const) {
    authoritativeRecordsContract(`${plugin} [${adapter}]`, async () => {
      const r = await registryEntries(adapter);
      const client = r[resource];
      return {
        port: r.deployed.deployment.get(token),
        db: r.deployed.deployment.get(Database),
        document: client.document,
        resolve: client.resolve,
        communitySave: client.save,
        close: () => r.deployed.close(),
      };
    });
  }
});
