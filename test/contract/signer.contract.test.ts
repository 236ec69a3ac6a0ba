import { Database } from '../../core/ports/database.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { Signer, type SignatureAlg } from '../../core/ports/signer.ts';
import type { PluginFactory } from '../../core/plugin.ts';
import signerEd25519 from '../../plugins/signer-ed25519/index.ts';
import signerP256 from '../../plugins/signer-ecdsa-p256/index.ts';
import type { ReloadableSigner } from '../../lib/signer/plugin.ts';
import { revokeKey, rotateKey } from '../../lib/signer/store.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { signerContract } from './signer.contract.ts';

const adapters: Array<[string, PluginFactory<any>, SignatureAlg]> = [
  ['signer-ed25519', signerEd25519, 'ed25519'],
  ['signer-ecdsa-p256', signerP256, 'ecdsa-p256-sha256'],
];

// Each signer with its keys generated and kept (sealed) in the database, on each adapter; rotation
// and revocation go through the key store as an operator's CLI would, then the signer reloads.
for (const [name, plugin, alg] of adapters) {
  forEachAdapter(`signer contract: ${name}`, (adapter) =>
    signerContract(`${name} [${adapter}]`, alg, async () => {
      const namespace = 'adcp';
      const d = await deploy(adapter, [plugin()], { env: { PROTOCOL_NAMESPACE: namespace, SECRETS_KEY: 'contract-secrets-key-0123456789abcdef' } });
      const signer = d.deployment.get(Signer) as ReloadableSigner;
      const db = d.deployment.get(Database);
      const box = d.deployment.get(SecretBox);
      return {
        port: signer,
        async rotate() {
          await rotateKey(db, alg, namespace, box);
          await signer.reload();
        },
        async revoke(keyid) {
          await revokeKey(db, keyid, namespace, box);
          await signer.reload();
        },
        close: () => d.close(),
      };
    }),
  );
}
