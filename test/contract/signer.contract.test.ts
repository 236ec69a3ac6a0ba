import { Database } from '../../core/ports/database.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { Signer, type SignatureAlg } from '../../core/ports/signer.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import type { ReloadableSigner } from '../../plugins/signer-keyring/keyring.ts';
import { revokeKey, rotateKey } from '../../plugins/signer-keyring/store.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { signerContract } from './signer.contract.ts';

// The keyring adapter once per algorithm it offers.
const adapters: Array<[string, SignatureAlg]> = [
  ['signer-keyring ed25519', 'ed25519'],
  ['signer-keyring ecdsa-p256-sha256', 'ecdsa-p256-sha256'],
];

// Each signer with its keys generated and kept (sealed) in the database, on each adapter; rotation
// and revocation go through the key store as an operator's CLI would, then the signer reloads.
for (const [name, alg] of adapters) {
  forEachAdapter(`signer contract: ${name}`, (adapter) =>
    signerContract(`${name} [${adapter}]`, alg, async () => {
      const namespace = 'adcp';
      const d = await deploy(adapter, [signerKeyring({ alg })], {
        env: { PROTOCOL_NAMESPACE: namespace, SECRETS_KEY: 'contract-secrets-key-0123456789abcdef' },
      });
      const signer = d.deployment.get(Signer) as ReloadableSigner;
      const db = d.deployment.get(Database);
      const box = d.deployment.get(SecretBox);
      return {
        port: signer,
        async rotate() {
          await rotateKey(db, alg, namespace, new Date(), box);
          await signer.reload();
        },
        async revoke(keyid) {
          await revokeKey(db, keyid, namespace, new Date(), box);
          await signer.reload();
        },
        close: () => d.close(),
      };
    }),
  );
}
