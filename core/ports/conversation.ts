import { token } from '../token.ts';
import type { BrandProfile } from './brand-profiles.ts';

/** Something a sponsored-intelligence offering can show as a product card. */
export interface SiProduct {
  product_id: string;
  name: string;
  description?: string;
  /** Display price, e.g. `$129` or `from $41,900`. */
  price?: string;
  image_url?: string;
  url?: string;
}

/** A brand's conversational offering (si_get_offering). */
export interface SiOffering {
  offering_id: string;
  /** The represented brand's registry domain. */
  brand_domain: string;
  title: string;
  summary?: string;
  tagline?: string;
  price_hint?: string;
  image_url?: string;
  landing_url?: string;
  products: readonly SiProduct[];
}

/** One turn for the brand to answer: what the user said (or did) and the conversation so far. */
export interface ConversationTurn {
  brand: BrandProfile;
  offering: SiOffering;
  /** The host's handoff description of what the user wants. */
  intent: string;
  /** Earlier turns, oldest first. */
  transcript: ReadonlyArray<{ role: 'user' | 'brand'; text: string }>;
  /** The user's message; absent on the opening turn and on an action. */
  message?: string;
  /** A button the user pressed on an earlier answer. */
  action?: { action: string; payload?: Record<string, unknown> };
  /** Only what the user consented to share; nothing without consent. */
  user: { locale?: string; name?: string };
}

export interface ConversationReply {
  /** What the brand says. */
  message: string;
  /** Products to show as cards, with a button each. */
  products?: readonly SiProduct[];
  /** The user is ready to buy (`transaction`, with the product) or the conversation is done (`complete`). */
  handoff?: { type: 'transaction'; product: SiProduct } | { type: 'complete' };
}

/**
 * Answers the turns of a sponsored-intelligence session for the brand. The brand agent ships a
 * deterministic adapter (the offering's products and the brand's own facts, no model); a plugin that
 * `provides: [Conversation]` can answer with a model instead. Contract: never invents prices or facts
 * beyond the offering and the brand profile it is given; throws only when it cannot answer at all.
 */
export interface ConversationPort {
  readonly name: string;
  reply(turn: ConversationTurn): Promise<ConversationReply>;
}

export const Conversation = token<ConversationPort>('core.conversation');
