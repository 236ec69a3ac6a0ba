import requestSigning from '../plugins/request-signing/index.ts';
import runnerJwks from './adcp-conformance-runner-jwks.json';

/**
 * Request signing for a sandbox that the AdCP conformance runner grades (the signed_requests
 * storyboard and its runner test kit, `test-kits/signed-requests-runner.yaml`): signatures are
 * verified on every mount under the published policy (supported, required for nothing), and the
 * runner is a registered test counterparty. Its keys are pinned (their private halves are public, so
 * only a sandbox may trust them), `test-revoked-2026` is revoked, its per-keyid cap is the kit's
 * grading target (100, for its keys only), and `POST {mount}/adcp/...` under each mount verifies a
 * vector without executing it, refusing unsigned `create_media_buy` as the vectors' profile says.
 */
export function conformanceSigning(mounts: string[]) {
  return requestSigning({
    signers: [{ id: 'adcp-conformance-runner', jwks: runnerJwks, perKeyidCap: 100 }],
    revoked: ['test-revoked-2026'],
    probe: { mounts, requiredFor: ['create_media_buy'] },
  });
}
