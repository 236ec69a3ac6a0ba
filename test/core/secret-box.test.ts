import { expect, test } from 'bun:test';
import pino from 'pino';
import { createSecretBox } from '../../core/secret-box.ts';

const logger = pino({ level: 'silent' });

test('seal/open round trip with AES-GCM; a wrong key and tampering are refused; plaintext passes through', async () => {
  const box = createSecretBox('k'.repeat(40), logger);
  const sealed = await box.seal('hmac-secret-value-0123456789abcdef');
  expect(sealed).toStartWith('sealed:v1:');
  expect(sealed).not.toContain('hmac-secret-value');
  expect(await box.seal('same')).not.toBe(await box.seal('same')); // fresh IV per value
  expect(await box.open(sealed)).toBe('hmac-secret-value-0123456789abcdef');
  expect(await box.open('legacy-plaintext')).toBe('legacy-plaintext');
  await expect(createSecretBox('x'.repeat(40), logger).open(sealed)).rejects.toThrow(/wrong key/);
  const tampered = `${sealed.slice(0, -4)}AAAA`;
  await expect(box.open(tampered)).rejects.toThrow(/cannot be opened/);
});

test('without a key, values are stored as given (and opening a sealed one says why it cannot)', async () => {
  const box = createSecretBox(undefined, logger);
  expect(box.encrypting).toBe(false);
  expect(await box.seal('plain')).toBe('plain');
  const sealed = await createSecretBox('k'.repeat(40), logger).seal('v');
  await expect(box.open(sealed)).rejects.toThrow(/SECRETS_KEY is not set/);
});
