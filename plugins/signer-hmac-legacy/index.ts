import { definePlugin } from '../../core/plugin.ts';
import { HmacSigner } from '../../core/ports/hmac-signer.ts';
import { createHmacSigner } from './hmac.ts';

/**
 * Legacy webhook HMAC-SHA256 (deprecated; removed in protocol 4.0). Used only for registrations
 * whose `authentication.schemes` is `['HMAC-SHA256']`; the default is RFC 9421 signing.
 */
export default definePlugin({
  name: 'signer-hmac-legacy',
  provides: [HmacSigner],
  init(_deps, kernel) {
    kernel.provide(HmacSigner, createHmacSigner(kernel.config.protocol.namespace));
  },
});
