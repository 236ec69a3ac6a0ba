/**
 * The model-backed conversation (plugins/conversation-model) against a loopback server that answers like an
 * OpenAI-compatible chat-completions API from a recorded answer, over the real HTTP client (the crawler):
 * the port's contract held (cards and handoffs only of the offering, no invented price, bounded text),
 * retries with backoff (pauses recorded, not slept), timeouts and garbage ending as SERVICE_UNAVAILABLE,
 * and sessions over the real task pipeline with answers valid against both AdCP versions.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError } from '../../core/errors.ts';
import { resolveOptions, type PluginInstance } from '../../core/plugin.ts';
import type { AppConfig, Env } from '../../core/config.ts';
import allPreset from '../../config/all.ts';
import testAgentPreset from '../../config/test-agent.ts';
import { siConversation } from '../../config/si-conversation.ts';
import type { ConversationTurn, SiOffering } from '../../core/ports/conversation.ts';
import type { BrandProfile } from '../../core/ports/brand-profiles.ts';
import type { ChatModelOptions, ChatUsage } from '../../lib/model-chat.ts';
import crawlerHttp, { HttpCrawler } from '../../plugins/crawler-http/index.ts';
import conversationModel from '../../plugins/conversation-model/index.ts';
import { createModelConversation, MAX_MESSAGE } from '../../plugins/conversation-model/model-conversation.ts';
import { forEachDatabase } from '../support/db.ts';
import { startChatApi, type ChatAnswer } from '../support/chat-api.ts';
import { restClient } from '../support/agent.ts';
import { identity, key, OFFERING, siServer, TOKEN, valid, VOLTA } from './si-fixture.ts';

const RECORDED = readFileSync(join(import.meta.dir, '../fixtures/model/si-chat-completion.json'), 'utf8');
const RECORDED_MESSAGE = JSON.parse(JSON.parse(RECORDED).choices[0].message.content).message as string;
const STANDARD = OFFERING.products[1]!;

let api: ReturnType<typeof startChatApi>;
let queue: ChatAnswer[];
let seen: ReturnType<typeof startChatApi>['seen'];

beforeAll(() => {
  api = startChatApi(RECORDED);
  ({ queue, seen } = api);
});
afterAll(() => api.stop());

/** The recorded answer with other content (usage kept: 311 in, 52 out). */
const completion = (content: unknown) =>
  JSON.stringify({
    ...JSON.parse(RECORDED),
    choices: [{ index: 0, message: { role: 'assistant', content: typeof content === 'string' ? content : JSON.stringify(content) } }],
  });
const reset = (...answers: ChatAnswer[]) => {
  queue.length = seen.length = 0;
  queue.push(...answers);
};

const BRAND: BrandProfile = {
  domain: 'nova.example',
  source: 'brand_json',
  name: 'Nova Motors',
  names: [{ en: 'Nova Motors' }],
  house: { domain: 'nova.example', name: 'Nova Motors' },
  logos: [],
  colors: {},
  description: 'Electric vehicles.',
};
const OFFER: SiOffering = { ...OFFERING, brand_domain: OFFERING.brand };
const turn = (extra: Partial<ConversationTurn> = {}): ConversationTurn => ({
  brand: BRAND,
  offering: OFFER,
  intent: 'electric road trips',
  transcript: [],
  user: { name: 'Dana', locale: 'en-US' },
  ...extra,
});

const MODEL_TIMEOUT_MS = 300;
const options = (o: Partial<ChatModelOptions> = {}): ChatModelOptions => ({
  baseUrl: api.baseUrl,
  model: 'gpt-4o-mini',
  apiKey: 'sk-test-si-key',
  timeoutMs: MODEL_TIMEOUT_MS,
  retries: 1,
  backoffMs: 50,
  allowHttp: true,
  ...o,
});
/** The adapter over the real crawler; pauses and usage are recorded instead of slept and logged. */
function adapter(o: Partial<ChatModelOptions> = {}) {
  const pauses: number[] = [];
  const usage: ChatUsage[] = [];
  const conversation = createModelConversation(options(o), {
    crawler: new HttpCrawler({ allowlist: ['127.0.0.1'] }),
    sleep: async (ms) => void pauses.push(ms),
    onUsage: (u) => void usage.push(u),
  });
  return { conversation, pauses, usage };
}
const failure = async (p: Promise<unknown>) => {
  const error = await p.then(
    () => null,
    (e) => e,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
};

test('the recorded answer: its text, cards only of the offering (the invented product dropped), the key sent, usage counted', async () => {
  reset();
  const { conversation, usage } = adapter();
  const reply = await conversation.reply(turn({ message: 'How far does the Long Range go?', transcript: [{ role: 'user', text: 'electric road trips' }] }));
  expect(reply).toEqual({ message: RECORDED_MESSAGE, products: [VOLTA] });
  expect(usage).toEqual([{ model: 'gpt-4o-mini', inputTokens: 311, outputTokens: 52 }]);
  expect(seen).toHaveLength(1);
  expect(seen[0]!.authorization).toBe('Bearer sk-test-si-key');
  const { model, messages, response_format } = seen[0]!.body;
  expect({ model, response_format }).toEqual({ model: 'gpt-4o-mini', response_format: { type: 'json_object' } });
  // The brand, the offering's products and the consented user details are in the system prompt; the turns follow.
  expect(messages[0].role).toBe('system');
  for (const part of ['Nova Motors', 'volta_lr: Volta EV Long Range', 'price $41,900', 'Dana', 'en-US', 'electric road trips'])
    expect(messages[0].content).toContain(part);
  expect(messages.slice(1)).toEqual([
    { role: 'user', content: 'electric road trips' },
    { role: 'user', content: 'How far does the Long Range go?' },
  ]);
});

test('a handoff names an offering product and carries the offering’s own name and price; a fenced answer is read', async () => {
  reset({
    body: completion('```json\n' + JSON.stringify({ message: 'The Standard it is.', handoff: { type: 'transaction', product_id: 'volta_std' } }) + '\n```'),
  });
  const { conversation } = adapter();
  const reply = await conversation.reply(turn({ action: { action: 'checkout', payload: { product_id: 'volta_std' } } }));
  expect(reply).toEqual({ message: 'The Standard it is.', handoff: { type: 'transaction', product: STANDARD } });
  expect(seen[0]!.body.messages.at(-1).content).toContain('pressed the button "checkout" with {"product_id":"volta_std"}');
  reset({ body: completion({ message: 'Thanks for stopping by.', product_ids: [], handoff: { type: 'complete' } }) });
  expect(await conversation.reply(turn({ message: 'bye' }))).toEqual({ message: 'Thanks for stopping by.', handoff: { type: 'complete' } });
});

test('a 503 and a 429 are retried after doubling pauses, a longer Retry-After wins; malformed answers are asked again and billed', async () => {
  reset(
    { status: 503, body: '{"error":{"message":"overloaded"}}' },
    { status: 429, body: '{"error":{"message":"slow down"}}', headers: { 'retry-after': '2' } },
  );
  const retried = adapter({ retries: 2 });
  expect((await retried.conversation.reply(turn())).message).toBe(RECORDED_MESSAGE);
  expect(seen).toHaveLength(3);
  expect(retried.pauses).toEqual([50, 2000]);

  reset({ body: completion({ message: '' }) });
  const again = adapter();
  expect((await again.conversation.reply(turn())).products).toEqual([VOLTA]);
  expect(seen).toHaveLength(2);
  expect(again.pauses).toEqual([50]);
  // Both answers were billed.
  expect(again.usage).toEqual([{ model: 'gpt-4o-mini', inputTokens: 622, outputTokens: 104 }]);
});

test('an answer slower than timeoutMs, every time: SERVICE_UNAVAILABLE (transient) after the retries', async () => {
  reset({ delayMs: MODEL_TIMEOUT_MS * 3 }, { delayMs: MODEL_TIMEOUT_MS * 3 });
  const { conversation, pauses } = adapter();
  const error = await failure(conversation.reply(turn()));
  expect({ code: error.code, status: error.status, recovery: error.recovery }).toEqual({ code: 'SERVICE_UNAVAILABLE', status: 503, recovery: 'transient' });
  expect(error.message).toContain('the conversation model did not answer');
  expect(seen).toHaveLength(2);
  expect(pauses).toEqual([50]);
});

test('garbage, invented handoffs and prices, over-long text: asked again, then SERVICE_UNAVAILABLE naming why; a refused key at once', async () => {
  const long = 'Volta. '.repeat(Math.ceil(MAX_MESSAGE / 7) + 1);
  for (const [answers, calls, message] of [
    [[{ body: 'not json at all' }, { body: '{"choices": []}' }], 2, 'something other than the requested JSON reply'],
    [[{ body: completion('Sure! The Volta is great.') }, { body: completion({ product_ids: ['volta_lr'] }) }], 2, 'the requested JSON reply (message: '],
    [
      [
        { body: completion({ message: 'Buy the Turbo.', handoff: { type: 'transaction', product_id: 'volta_turbo_x' } }) },
        { body: completion({ message: 'Buy the Turbo.', handoff: { type: 'transaction', product_id: 'volta_turbo_x' } }) },
      ],
      2,
      'handoff.product_id: is not a product of the offering',
    ],
    [
      [
        { body: completion({ message: 'The Long Range is $39,999 this week.' }) },
        { body: completion({ message: 'Only USD 39,999 today, or 39999 dollars later.' }) },
      ],
      2,
      'message: quotes a price the offering does not give',
    ],
    [[{ body: completion({ message: long }) }, { body: completion({ message: long }) }], 2, `message: is longer than ${MAX_MESSAGE} characters`],
    [[{ status: 401, body: '{"error":{"message":"bad key"}}' }], 1, 'refused the request (HTTP 401); check SI_MODEL and SI_MODEL_API_KEY'],
  ] as const) {
    reset(...answers);
    const error = await failure(adapter().conversation.reply(turn({ message: 'What does the Long Range cost?' })));
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.message).toContain(message);
    expect(error.message).not.toContain('sk-test-si-key');
    expect(seen).toHaveLength(calls);
  }
});

test('the all-in-one and test-agent presets add the model conversation only when SI_MODEL_URL is set', () => {
  for (const preset of [allPreset, testAgentPreset]) expect(preset.plugins).toContain(siConversation);
  const entry = siConversation as (context: { config: AppConfig; env: Env }) => PluginInstance<unknown> | null;
  expect(entry({ config: {} as AppConfig, env: {} })).toBeNull();
  expect(entry({ config: {} as AppConfig, env: { SI_MODEL_URL: 'https://models.example/v1' } })?.definition.name).toBe('conversation-model');
});

test('a half-configured model is a configuration error naming the missing variable', () => {
  expect(() => resolveOptions(conversationModel(), { SI_MODEL_URL: 'https://models.example/v1' })).toThrow('SI_MODEL)');
  expect(() => resolveOptions(conversationModel(), { SI_MODEL: 'gpt-4o-mini' })).toThrow('SI_MODEL_URL');
  expect(resolveOptions(conversationModel(), { SI_MODEL_URL: 'https://models.example/v1', SI_MODEL: 'gpt-4o-mini', SI_MODEL_API_KEY: 'k' })).toMatchObject({
    baseUrl: 'https://models.example/v1',
    model: 'gpt-4o-mini',
    apiKey: 'k',
    retries: 2,
  });
});

forEachDatabase(
  'sponsored intelligence answered by a model',
  (adapterName, schema) => siServer(adapterName, schema, [crawlerHttp({ allowlist: ['127.0.0.1'] }), conversationModel({ ...options({ backoffMs: 0 }) })]),
  (s) => s.close(),
  (get) => {
    test('a session: the opening and a purchase from the model, valid in both versions; only consented user details reach the model', async () => {
      const c = restClient(get(), TOKEN);
      reset();
      // Consent to the locale only: the name and the email stay with the host.
      const opened = await c.call('si_initiate_session', {
        idempotency_key: key(),
        intent: 'wants to talk to Nova about electric road trips',
        identity: { ...identity, consent_scope: ['locale'] },
        offering_id: 'nova_volta',
      });
      expect(opened.ok).toBe(true);
      valid('si-initiate-session-response.json', opened.body);
      const response = opened.body.response as any;
      expect(response.message).toBe(RECORDED_MESSAGE);
      expect(response.ui_elements.filter((e: any) => e.type === 'product_card').map((e: any) => [e.data.title, e.data.price])).toEqual([
        [VOLTA.name, VOLTA.price],
      ]);
      expect(response.surface.components.filter((x: any) => x.component.ProductCard)).toHaveLength(1);
      const prompt = JSON.stringify(seen[0]!.body.messages);
      expect(prompt).toContain('en-US');
      expect(prompt).not.toContain('Dana');
      expect(prompt).not.toContain('dana@example.com');

      reset({ body: completion({ message: 'Great choice: the Volta EV Standard is $41,900.', handoff: { type: 'transaction', product_id: 'volta_std' } }) });
      const bought = await c.call('si_send_message', { idempotency_key: key(), session_id: opened.body.session_id, message: 'I want to buy the Standard' });
      expect(bought.ok).toBe(true);
      valid('si-send-message-response.json', bought.body);
      expect(bought.body).toMatchObject({
        session_status: 'pending_handoff',
        handoff: { type: 'transaction', intent: { action: 'purchase', product: { product_id: 'volta_std', name: STANDARD.name, price: STANDARD.price } } },
      });
      // The model saw the conversation so far, then the new message.
      expect(seen[0]!.body.messages.slice(1)).toEqual([
        { role: 'user', content: 'wants to talk to Nova about electric road trips' },
        { role: 'assistant', content: RECORDED_MESSAGE },
        { role: 'user', content: 'I want to buy the Standard' },
      ]);
    });

    test('a model that cannot answer fails the turn with SERVICE_UNAVAILABLE (503, not 500) and records nothing of it', async () => {
      const c = restClient(get(), TOKEN);
      reset();
      const opened = await c.call('si_initiate_session', { idempotency_key: key(), intent: 'Nova road trips', identity, offering_id: 'nova_volta' });
      expect(opened.ok).toBe(true);
      reset({ status: 503, body: '{"error":{"message":"overloaded"}}' }, { body: 'garbage' });
      const turnKey = key();
      const res = await get().fetch('/tasks/si_send_message', {
        method: 'POST',
        token: TOKEN,
        json: { idempotency_key: turnKey, session_id: opened.body.session_id, message: 'Tell me about charging' },
      });
      expect(res.status).toBe(503);
      const body = (await res.json()) as any;
      expect(body.code).toBe('SERVICE_UNAVAILABLE');
      expect(body.message).toContain('The brand could not answer: the conversation model answered something other than the requested JSON reply');
      expect(seen).toHaveLength(2);
      const listed = await c.call('list_si_sessions', { include_transcript: true });
      expect((listed.body.sessions as any[]).find((x) => x.session_id === opened.body.session_id)).toMatchObject({ session_status: 'active', turns: 2 });
      // The host retries the same turn (same key) once the model answers again; the session goes on.
      reset();
      const asked = await c.call('si_send_message', { idempotency_key: turnKey, session_id: opened.body.session_id, message: 'Tell me about charging' });
      expect(asked.body.replayed).toBeUndefined();
      expect(seen).toHaveLength(1);
      valid('si-send-message-response.json', asked.body);
      expect(asked.body.session_status).toBe('active');
    });
  },
);
