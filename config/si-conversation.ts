import type { PluginEntry } from '../core/config.ts';
import conversationModel from '../plugins/conversation-model/index.ts';

/**
 * The brand agent's sponsored-intelligence conversation: an OpenAI-compatible model when SI_MODEL_URL is
 * set (the plugin reads SI_MODEL and SI_MODEL_API_KEY too, and calls through the preset's crawler), else
 * nothing, and the brand agent answers with its deterministic catalog conversation.
 */
export const siConversation: PluginEntry = ({ env }) => (env.SI_MODEL_URL ? conversationModel() : null);
