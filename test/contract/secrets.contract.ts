import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';

export interface SecretBoxSubject {
  port: SecretBoxPort;
  /** A box of the same implementation configured with a different key. */
  other: SecretBoxPort;
  close(): Promise<void>;
}

const VALUES = ['hmac-secret-value-0123456789abcdef', '', 'ünïcødé ✓ and "quotes"', 'x'.repeat(10_000)];

/**
 * The SecretBox contract (core/ports/secrets.ts). `encrypting` says which configuration is under
 * test: with a key, values are sealed; without one, they are stored as given.
 */
export function secretBoxContract(name: string, encrypting: boolean, make: () => Promise<SecretBoxSubject>): void {
  describe(`secrets contract: ${name}`, () => {
    let subject: SecretBoxSubject;
    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await subject?.close();
    });
    const box = () => subject.port;

    test(`encrypting is ${encrypting}`, () => {
      expect(box().encrypting).toBe(encrypting);
    });

    test('open(seal(x)) is x', async () => {
      for (const value of VALUES) expect(await box().open(await box().seal(value))).toBe(value);
    });

    test('values stored before encryption was configured (not sealed) pass through open', async () => {
      expect(await box().open('legacy-plaintext')).toBe('legacy-plaintext');
      expect(await box().open('')).toBe('');
    });

    if (encrypting) {
      test('sealed text is marked sealed:v1:, hides the value and differs on every call (fresh IV)', async () => {
        const sealed = await box().seal(VALUES[0]!);
        expect(sealed).toStartWith('sealed:v1:');
        expect(sealed).not.toContain(VALUES[0]!);
        expect(await box().seal('same')).not.toBe(await box().seal('same'));
      });

      test('tampered text is refused', async () => {
        const sealed = await box().seal(VALUES[0]!);
        await expect(box().open(`${sealed.slice(0, -4)}AAAA`)).rejects.toThrow(/cannot be opened/);
      });

      test('text sealed under another key is refused, saying the key may be wrong', async () => {
        await expect(box().open(await subject.other.seal('v'))).rejects.toThrow(/wrong key/);
      });
    } else {
      test('seal stores the value as given', async () => {
        for (const value of VALUES) expect(await box().seal(value)).toBe(value);
      });

      test('a sealed value cannot be opened, and the error says SECRETS_KEY is not set', async () => {
        await expect(box().open(await subject.other.seal('v'))).rejects.toThrow(/SECRETS_KEY is not set/);
      });
    }
  });
}
