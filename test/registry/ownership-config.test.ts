import { expect, test } from 'bun:test';
import { assemble } from '../../core/deployment.ts';
import { ConfigError } from '../../core/config.ts';
import { resolveOptions } from '../../core/plugin.ts';
import preset from '../../config/registry.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';

/** registry-ownership's options as a deployment with this environment resolves them. */
const fromEnv = (env: Record<string, string>) => resolveOptions(registryOwnership(), env) as { mode: string; protectedDomains: string[] };

test('the registry preset requires proof by default; OWNERSHIP_PROOF=off turns it off', () => {
  expect(fromEnv({}).mode).toBe('required');
  expect(fromEnv({ OWNERSHIP_PROOF: '' }).mode).toBe('required');
  expect(fromEnv({ OWNERSHIP_PROOF: 'off' }).mode).toBe('off');
  expect(fromEnv({ PROTECTED_DOMAINS: 'GoodBank.com, https://shop.example/ ,' }).protectedDomains).toEqual(['goodbank.com', 'shop.example']);
});

test('a bad value is a configuration error naming the option path and the variable', () => {
  expect(() => fromEnv({ OWNERSHIP_PROOF: 'sometimes' })).toThrow(ConfigError);
  expect(() => fromEnv({ OWNERSHIP_PROOF: 'sometimes' })).toThrow(
    'plugins.registry-ownership.mode: must be "required" or "off" (from OWNERSHIP_PROOF="sometimes")',
  );
  expect(() => fromEnv({ PROTECTED_DOMAINS: 'ok.example,not a domain' })).toThrow(
    /^plugins\.registry-ownership\.protectedDomains\[1\]: invalid domain: .*\(from PROTECTED_DOMAINS="ok\.example,not a domain"\)$/,
  );
});

test('assembling the registry preset fails fast on a bad OWNERSHIP_PROOF, before opening storage', async () => {
  await expect(assemble(preset, { env: { LOG_LEVEL: 'silent', DATA_DIR: 'memory://', OWNERSHIP_PROOF: 'sometimes' } })).rejects.toThrow(
    'plugins.registry-ownership.mode',
  );
});
