import type { SecretBoxPort } from './ports/secrets.ts';

const PREFIX = 'sealed:v1:';
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/**
 * AES-256-GCM with a key derived (SHA-256) from the configured secret (`SECRETS_KEY`). A fresh
 * 96-bit IV per value; the output is `sealed:v1:<iv>:<ciphertext+tag>`. Without a key, values
 * are stored as given (the deployment warns about that once, at start: core/deployment.ts).
 */
export function createSecretBox(secret: string | undefined): SecretBoxPort {
  let key: Promise<CryptoKey> | null = null;
  const cryptoKey = () =>
    (key ??= crypto.subtle
      .digest('SHA-256', new TextEncoder().encode(secret))
      .then((raw) => crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt'])));
  return {
    encrypting: !!secret,
    async seal(plaintext) {
      if (!secret) return plaintext;
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await cryptoKey(), new TextEncoder().encode(plaintext));
      return `${PREFIX}${b64(iv)}:${b64(new Uint8Array(sealed))}`;
    },
    async open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      if (!secret) throw new Error('A sealed secret was found but SECRETS_KEY is not set');
      const [iv, data] = stored.slice(PREFIX.length).split(':');
      try {
        const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: Buffer.from(iv!, 'base64url') }, await cryptoKey(), Buffer.from(data!, 'base64url'));
        return new TextDecoder().decode(plain);
      } catch {
        throw new Error('A sealed secret cannot be opened with the configured SECRETS_KEY (wrong key?)');
      }
    },
  };
}
