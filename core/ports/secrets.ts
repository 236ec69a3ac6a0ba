import { token } from '../token.ts';

/**
 * Encryption at rest for secrets the deployment must be able to use again (signing keys, webhook
 * credentials), as opposed to secrets it only verifies (API keys are hashed instead).
 * `seal` returns text to store; `open` reverses it and passes unsealed (older) values through.
 * Contract (test/contract/secrets.contract.ts): sealed text starts with `sealed:v1:` (anything
 * else is unsealed), never contains the value and differs on every call; `open` throws for
 * tampered text, text sealed under another key, and sealed text when no key is configured.
 */
export interface SecretBoxPort {
  /** False when no key is configured: values are stored as given. */
  readonly encrypting: boolean;
  seal(plaintext: string): Promise<string>;
  open(stored: string): Promise<string>;
}

export const SecretBox = token<SecretBoxPort>('core.secret-box');
