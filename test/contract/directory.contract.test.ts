import { expect } from 'bun:test';
import { BrandDirectory, PropertyDirectory } from '../../core/ports/directory.ts';
import { forEachAdapter } from '../support/deploy.ts';
import { registryEntries } from '../support/registry-entries.ts';
import { directoryContract } from './directory.contract.ts';

// The port is shared: registry-brands searches brands, registry-properties hosted properties.
forEachAdapter('directory contract', (adapter) => {
  directoryContract(`registry-brands [${adapter}]`, async () => {
    const r = await registryEntries(adapter);
    return {
      port: r.deployed.deployment.get(BrandDirectory),
      seed: async (domain, name) => expect(await r.brands.save(domain, name)).toBe(200),
      domainOf: (m) => m.domain,
      close: () => r.deployed.close(),
    };
  });
  directoryContract(`registry-properties [${adapter}]`, async () => {
    const r = await registryEntries(adapter);
    return {
      port: r.deployed.deployment.get(PropertyDirectory),
      seed: async (domain, name) => expect(await r.properties.save(domain, name)).toBe(200),
      domainOf: (m) => m.publisher_domain,
      close: () => r.deployed.close(),
    };
  });
});
