import { token } from '../token.ts';

/**
 * Encryption at rest for secrets the deployment must be able to use again (signing keys, webhook
 * credentials), as opposed to secrets it only verifies (API keys are hashed instead).
 * `seal` returns text to store; `open` reverses it and passes unsealed (older) values through.
 */
export interface SecretBoxPort {
  /** False when no key is configured: values are stored as given. */
  readonly encrypting: boolean;
  seal(plaintext: string): Promise<string>;
  open(stored: string): Promise<string>;
}

export const SecretBox = token<SecretBoxPort>('core.secret-box');
