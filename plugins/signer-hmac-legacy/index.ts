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
  register(ctx) {
    ctx.provide(HmacSigner, createHmacSigner(ctx.config.protocol.namespace));
  },
});
