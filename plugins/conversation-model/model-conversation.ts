import * as v from 'valibot';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { ConversationPort, ConversationReply, ConversationTurn, SiOffering, SiProduct } from '../../core/ports/conversation.ts';
import { chatJson, type ChatModelOptions, type ChatUsage } from '../../lib/model-chat.ts';

/** Longest brand message accepted from the model (it is asked for 600 characters). */
export const MAX_MESSAGE = 1000;
/** Product cards shown with one answer. */
const MAX_CARDS = 3;
/** Earlier turns sent with each request, and the characters kept of each. */
const HISTORY_TURNS = 20;
const HISTORY_CHARS = 2000;

const LABELS = {
  model: 'the conversation model',
  expected: 'the requested JSON reply',
  credentials: 'SI_MODEL and SI_MODEL_API_KEY',
  failure: 'The brand could not answer',
};

/** Amounts of money in a text, as bare numbers (`$46,900` and `46900 USD` are both `46900`). */
const MONEY = /(?:[$€£¥]|\b(?:usd|eur|gbp)\s?)(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s?(?:usd|eur|gbp|dollars?|euros?|pounds?)\b/gi;
const amounts = (text: string) => [...text.matchAll(MONEY)].map((m) => (m[1] ?? m[2])!.replace(/,/g, '').replace(/\.0+$/, ''));
/** Every number the brand's own texts give; a price the model quotes must be one of them. */
const NUMBER = /\d[\d,]*(?:\.\d+)?/g;
const numbers = (texts: ReadonlyArray<string | undefined>) =>
  new Set(texts.flatMap((t) => (t ?? '').match(NUMBER) ?? []).map((n) => n.replace(/,/g, '').replace(/\.0+$/, '')));

/**
 * The answer the model must give for this turn. Cards naming unknown products are dropped later; a
 * handoff to a product the offering lacks, or a price the offering does not give, makes the answer
 * malformed (asked again, then a failure): the port's contract is that nothing is invented.
 */
function replySchema(turn: ConversationTurn) {
  const ids = new Set(turn.offering.products.map((p) => p.product_id));
  const { offering: o, brand } = turn;
  const known = numbers([
    o.summary,
    o.tagline,
    o.price_hint,
    o.title,
    brand.description,
    brand.tagline,
    ...o.products.flatMap((p) => [p.price, p.description, p.name]),
  ]);
  return v.object({
    message: v.pipe(
      v.string('must be text'),
      v.trim(),
      v.minLength(1, 'is empty'),
      v.maxLength(MAX_MESSAGE, `is longer than ${MAX_MESSAGE} characters`),
      v.check((m) => amounts(m).every((a) => known.has(a)), 'quotes a price the offering does not give'),
    ),
    product_ids: v.nullish(v.array(v.string('must be product ids')), []),
    handoff: v.nullish(
      v.variant('type', [
        v.object({
          type: v.literal('transaction'),
          product_id: v.pipe(
            v.string('must name a product'),
            v.check((id) => ids.has(id), 'is not a product of the offering'),
          ),
        }),
        v.object({ type: v.literal('complete') }),
      ]),
    ),
  });
}

const line = (label: string, value: string | undefined) => (value ? `${label}: ${value}` : '');

function describeProduct(p: SiProduct): string {
  return `- ${p.product_id}: ${p.name}${p.description ? ` - ${p.description}` : ''}${p.price ? ` - price ${p.price}` : ''}`;
}

/** What the model is told: the brand, the offering, the host's intent and the user's consented details only. */
function systemPrompt(t: ConversationTurn): string {
  const { brand, offering: o } = t;
  const tone = brand.tone;
  return [
    `You are the conversational assistant of the brand ${brand.name} (${brand.domain}). A host AI handed a user over to you to talk about the offering below.`,
    'Use only the facts given here. Never invent products, prices, discounts, specifications or availability; quote prices exactly as listed; when you do not know, say so and point to the landing page.',
    line('Brand description', brand.description),
    line('Tagline', brand.tagline),
    line('Voice', tone?.voice),
    tone?.dos?.length ? `Do: ${tone.dos.join('; ')}` : '',
    tone?.donts?.length ? `Do not: ${tone.donts.join('; ')}` : '',
    `Offering: ${o.title}`,
    line('Summary', o.summary),
    line('Offering tagline', o.tagline),
    line('Prices', o.price_hint),
    line('Landing page', o.landing_url),
    o.products.length ? `Products (id: name - description - price):\n${o.products.map(describeProduct).join('\n')}` : 'No products are listed.',
    `What the host says the user wants: ${t.intent}`,
    // Consent: only what the session kept of the user (turn.user) is ever sent.
    line("The user's name (you may address them by it)", t.user.name),
    line("The user's locale (answer in its language)", t.user.locale),
    'Answer with one JSON object only: {"message": your answer to the user, plain text, at most 600 characters; "product_ids": ids from the product list to show as cards, at most 3, or []; ' +
      '"handoff": {"type": "transaction", "product_id": an id from the list} when the user wants to buy that product now, {"type": "complete"} when the user ends the conversation, else null}.',
  ]
    .filter(Boolean)
    .join('\n');
}

function userContent(t: ConversationTurn): string {
  if (t.message !== undefined) return t.message;
  if (t.action) {
    const payload = t.action.payload ? ` with ${JSON.stringify(t.action.payload).slice(0, 500)}` : '';
    return `(The user pressed the button "${t.action.action}"${payload}.)`;
  }
  return '(The user has just been handed over. Open the conversation: greet them and introduce the offering in the light of what they want.)';
}

function cards(offering: SiOffering, ids: readonly string[]): SiProduct[] {
  const byId = new Map(offering.products.map((p) => [p.product_id, p]));
  // Only the offering's own products, each once: an id the model made up is dropped.
  return [...new Set(ids)].flatMap((id) => byId.get(id) ?? []).slice(0, MAX_CARDS);
}

/**
 * A Conversation that asks an OpenAI-compatible chat model for each turn (lib/model-chat.ts: the Crawler
 * port, retries with backoff, SERVICE_UNAVAILABLE when the model cannot answer) and holds its answer to
 * the port's contract: cards and handoffs only of the offering's products (with the offering's own name
 * and price), prices in the text only as the brand gives them, the message bounded.
 */
export function createModelConversation(
  o: ChatModelOptions,
  deps: { crawler: CrawlerPort; sleep?: (ms: number) => Promise<void>; onUsage?: (usage: ChatUsage) => void },
): ConversationPort {
  return {
    name: `model:${o.model}`,
    async reply(turn) {
      const history = turn.transcript.slice(-HISTORY_TURNS).map((x) => ({
        role: x.role === 'brand' ? ('assistant' as const) : ('user' as const),
        content: x.text.slice(0, HISTORY_CHARS),
      }));
      const { value, usage } = await chatJson(
        o,
        {
          answer: replySchema(turn),
          labels: LABELS,
          temperature: 0.4,
          messages: [{ role: 'system', content: systemPrompt(turn) }, ...history, { role: 'user', content: userContent(turn) }],
        },
        deps,
      );
      deps.onUsage?.(usage);
      const reply: ConversationReply = { message: value.message };
      const shown = cards(turn.offering, value.product_ids);
      if (shown.length) reply.products = shown;
      const handoff = value.handoff;
      if (handoff?.type === 'transaction') {
        // The schema admitted only an offering product; the card shows the offering's own name and price.
        reply.handoff = { type: 'transaction', product: turn.offering.products.find((p) => p.product_id === handoff.product_id)! };
      } else if (handoff) reply.handoff = { type: 'complete' };
      return reply;
    },
  };
}
