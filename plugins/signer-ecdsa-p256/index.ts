import { defineSignerPlugin } from '../../lib/signer/plugin.ts';

/** Webhook signing with ECDSA P-256/SHA-256 (RFC 9421 alg `ecdsa-p256-sha256`, raw r||s signatures). */
export default defineSignerPlugin('signer-ecdsa-p256', 'ecdsa-p256-sha256');
