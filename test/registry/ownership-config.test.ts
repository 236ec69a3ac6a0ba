import { expect, test } from 'bun:test';
import { assemble } from '../../core/deployment.ts';
import { ConfigError } from '../../core/config.ts';
import preset, { ownershipFromEnv } from '../../config/registry.ts';

test('the registry preset requires proof by default; OWNERSHIP_PROOF=off turns it off', () => {
  expect(ownershipFromEnv({}).options.mode).toBe('required');
  expect(ownershipFromEnv({ OWNERSHIP_PROOF: '' }).options.mode).toBe('required');
  expect(ownershipFromEnv({ OWNERSHIP_PROOF: 'off' }).options.mode).toBe('off');
  expect(ownershipFromEnv({ OWNERSHIP_PROOF: 'required' }).definition.name).toBe('registry-ownership');
  expect(ownershipFromEnv({ PROTECTED_DOMAINS: 'GoodBank.com, https://shop.example/ ,' }).options.protectedDomains).toEqual(['goodbank.com', 'shop.example']);
});

test('a bad value is a configuration error naming the option path and the variable', () => {
  expect(() => ownershipFromEnv({ OWNERSHIP_PROOF: 'sometimes' })).toThrow(ConfigError);
  expect(() => ownershipFromEnv({ OWNERSHIP_PROOF: 'sometimes' })).toThrow('plugins.registry-ownership.mode: must be "required" or "off" (from OWNERSHIP_PROOF="sometimes")');
  expect(() => ownershipFromEnv({ PROTECTED_DOMAINS: 'ok.example,not a domain' })).toThrow(/^plugins\.registry-ownership\.protectedDomains\[1\]: invalid domain: .*\(from PROTECTED_DOMAINS\)$/);
});

test('assembling the registry preset fails fast on a bad OWNERSHIP_PROOF, before opening storage', async () => {
  const saved = process.env.OWNERSHIP_PROOF;
  process.env.OWNERSHIP_PROOF = 'sometimes';
  try {
    await expect(assemble(preset, { env: { LOG_LEVEL: 'silent', DATA_DIR: 'memory://' } })).rejects.toThrow('plugins.registry-ownership.mode');
  } finally {
    if (saved === undefined) delete process.env.OWNERSHIP_PROOF;
    else process.env.OWNERSHIP_PROOF = saved;
  }
});
