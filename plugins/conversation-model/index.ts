import * as v from 'valibot';
import { definePlugin, optional } from '../../core/plugin.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Conversation } from '../../core/ports/conversation.ts';
import { chatModelFields } from '../../lib/model-chat.ts';
import { createModelConversation } from './model-conversation.ts';

const options = v.object(chatModelFields({ url: 'SI_MODEL_URL', model: 'SI_MODEL' }));

/**
 * The brand agent's sponsored-intelligence conversation answered by an OpenAI-compatible chat model
 * (`POST {baseUrl}/chat/completions` through the SSRF-guarded crawler). Without this plugin the brand
 * agent answers with its deterministic catalog conversation.
 */
export default definePlugin({
  name: 'conversation-model',
  provides: [Conversation],
  deps: { crawler: optional(Crawler) },
  options,
  env: {
    SI_MODEL_URL: 'baseUrl',
    SI_MODEL: 'model',
    SI_MODEL_API_KEY: 'apiKey',
    SI_MODEL_TIMEOUT_MS: { path: 'timeoutMs', type: 'int' },
  },
  init({ crawler }, kernel) {
    if (!crawler)
      throw new ConfigError('plugins.conversation-model: needs a crawler in the deployment (crawler-http) for the calls to the model (SI_MODEL_URL)');
    const o = kernel.options;
    kernel.provide(
      Conversation,
      createModelConversation(o, {
        crawler,
        // Tokens per turn for the operator; the key is never part of what is logged.
        onUsage: (u) => kernel.logger.debug({ model: u.model, input_tokens: u.inputTokens, output_tokens: u.outputTokens }, 'si model turn'),
      }),
    );
  },
});
