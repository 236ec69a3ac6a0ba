import { HmacSigner } from '../../core/ports/hmac-signer.ts';
import signerHmac from '../../plugins/signer-hmac-legacy/index.ts';
import { deploy } from '../support/deploy.ts';
import { hmacSignerContract } from './hmac-signer.contract.ts';

// signer-hmac-legacy (no database), under the default namespace and under adcp.
for (const namespace of ['proto', 'adcp']) {
  hmacSignerContract(`signer-hmac-legacy (${namespace})`, async () => {
    const d = await deploy(null, [signerHmac()], { env: { PROTOCOL_NAMESPACE: namespace } });
    return { port: d.deployment.get(HmacSigner), namespace, close: () => d.close() };
  });
}
