import type { ConversationPort, ConversationReply, ConversationTurn, SiProduct } from '../../../core/ports/conversation.ts';

const WORD = /[\p{L}\p{N}]+/gu;
const STOP = new Set([
  'the',
  'a',
  'an',
  'and',
  'or',
  'for',
  'with',
  'of',
  'to',
  'in',
  'on',
  'is',
  'are',
  'what',
  'which',
  'best',
  'me',
  'my',
  'i',
  'you',
  'do',
  'your',
]);
const words = (text: string) => new Set((text.toLowerCase().match(WORD) ?? []).filter((w) => w.length > 2 && !STOP.has(w)));

/** Products whose name or description shares words with the text, best first. */
function matching(products: readonly SiProduct[], text: string): SiProduct[] {
  const asked = words(text);
  return products
    .map((p) => ({ p, score: [...words(`${p.name} ${p.description ?? ''}`)].filter((w) => asked.has(w)).length }))
    .filter((m) => m.score > 0)
    .sort((a, b) => b.score - a.score)
    .map((m) => m.p);
}

const BUY = /\b(buy|order|purchase|checkout|reserve|book)\b/i;
const DONE = /\b(bye|goodbye|thanks|thank you|that's all|no more)\b/i;

/**
 * The brand agent's own conversation: the same turn always gets the same answer, built only from the
 * offering (its products, price hints, links) and the brand's profile (description, tagline). It shows
 * products the user's words name, hands off to checkout when asked to buy one, and closes on goodbye.
 */
export function createCatalogConversation(): ConversationPort {
  return {
    name: 'catalog',
    async reply(t: ConversationTurn): Promise<ConversationReply> {
      const { brand, offering } = t;
      const greeting = t.user.name ? `Hi ${t.user.name}! ` : 'Hi! ';
      if (t.action) {
        const product = offering.products.find((p) => p.product_id === t.action!.payload?.product_id) ?? offering.products[0];
        if (/checkout|buy|purchase/i.test(t.action.action) && product) {
          return {
            message: `Great choice. ${product.name}${product.price ? ` is ${product.price}` : ''}; I'll hand you over to checkout.`,
            handoff: { type: 'transaction', product },
          };
        }
        if (product) return { message: `${product.name}: ${product.description ?? offering.summary ?? brand.description ?? ''}`.trim(), products: [product] };
      }
      if (t.message === undefined) {
        // Opening turn: introduce the offering in the light of the host's intent.
        const shown = matching(offering.products, t.intent).slice(0, 3);
        const intro = offering.summary ?? brand.description ?? offering.title;
        return {
          message: `${greeting}This is ${brand.name}. ${intro}${brand.tagline ? ` ${brand.tagline}.` : ''}`.trim(),
          products: shown.length ? shown : offering.products.slice(0, 3),
        };
      }
      if (DONE.test(t.message) && !BUY.test(t.message)) return { message: `Thanks for talking with ${brand.name}.`, handoff: { type: 'complete' } };
      const named = matching(offering.products, t.message);
      if (BUY.test(t.message) && named[0]) {
        return {
          message: `${named[0].name}${named[0].price ? ` (${named[0].price})` : ''}: I'll hand you over to checkout.`,
          handoff: { type: 'transaction', product: named[0] },
        };
      }
      if (named.length) {
        const first = named[0]!;
        return {
          message: `${first.name}${first.description ? `: ${first.description}` : ''}${first.price ? ` From ${first.price}.` : ''}`,
          products: named.slice(0, 3),
        };
      }
      const facts = [offering.summary, brand.description, offering.price_hint ? `Prices ${offering.price_hint}.` : undefined].filter(Boolean).join(' ');
      return { message: facts || `${brand.name} can tell you about ${offering.title}.`, products: offering.products.slice(0, 3) };
    },
  };
}
