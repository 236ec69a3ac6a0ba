/**
 * The model-backed copywriter (plugins.creative.model): build_creative against a loopback server that
 * answers like an OpenAI-compatible chat-completions API from a recorded answer, over the real HTTP
 * client path (the crawler). Retries with backoff, refused keys, slow and malformed answers end as a
 * clear task failure; usage is recorded per build.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startChatApi, type ChatAnswer } from '../support/chat-api.ts';
import { restClient } from '../support/agent.ts';
import { ACME, fid, OFFERINGS, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

const RECORDED = readFileSync(join(import.meta.dir, '../fixtures/model/chat-completion.json'), 'utf8');
const MODEL_TIMEOUT_MS = 400;

let model: ReturnType<typeof startChatApi>;
let queue: ChatAnswer[];
let seen: ReturnType<typeof startChatApi>['seen'];

beforeAll(() => {
  model = startChatApi(RECORDED);
  ({ queue, seen } = model);
});
afterAll(() => model.stop());

const completion = (content: string) => JSON.stringify({ ...JSON.parse(RECORDED), choices: [{ index: 0, message: { role: 'assistant', content } }] });

forEachDatabase(
  'creative model copywriter',
  async (adapter, schema) =>
    startCreativeServer(adapter, schema, {
      creative: {
        model: {
          baseUrl: model.baseUrl,
          model: 'gpt-4o-mini',
          apiKey: 'sk-test-model-key',
          timeoutMs: MODEL_TIMEOUT_MS,
          retries: 1,
          backoffMs: 5,
          allowHttp: true,
        },
      },
      extra: [crawlerHttp({ allowlist: ['127.0.0.1'] })],
    }),
  async (s) => s.server.close(),
  (get) => {
    const s = (): CreativeServer => get();
    let n = 0;
    /** Submit a build, run its step, and return the task as polled. */
    const build = async () => {
      const client = restClient(s().server, TOKEN);
      const { ok, body } = await client.call('build_creative', {
        idempotency_key: `model-build-${String(++n).padStart(10, '0')}-${Date.now()}`,
        target_format_id: fid('native_standard'),
        message: 'Rocket skates for commuters',
        creative_manifest: {
          format_id: fid('native_standard'),
          assets: { promoted_offerings: { brand_manifest: ACME, inline_offerings: OFFERINGS } },
        },
      });
      expect({ ok, body }).toMatchObject({ ok: true });
      // A model call is slow: the build is an asynchronous task.
      expect(body.status).toBe('submitted');
      await s().runDue();
      return { id: body.task_id as string, ...(await client.poll(body.task_id as string)) };
    };

    test('the model writes the copy, the template lays it out; the key is sent and the usage recorded', async () => {
      queue.length = seen.length = 0;
      const task = await build();
      expect(task.status).toBe('completed');
      const assets = (task.result as any).creative_manifest.assets;
      expect(assets.title.content).toBe('Rocket Skates: outrun the road');
      expect(assets.description.content).toBe('Lightweight skates built for speed, from Acme Rockets.');
      expect(assets.cta_text.content).toBe('Shop the skates');
      expect(seen).toHaveLength(1);
      expect(seen[0]!.authorization).toBe('Bearer sk-test-model-key');
      expect(seen[0]!.body.model).toBe('gpt-4o-mini');
      expect(seen[0]!.body.messages[1].content).toContain('Rocket skates for commuters');
      // The produced creative is a leaf of the build, with what the model spent on it.
      const rows = await s()
        .server.deployment.get(Database)
        .query<{ id: string; model: string; input_tokens: number; output_tokens: number }>(
          sql`SELECT id, model, input_tokens, output_tokens FROM creative_build_variants WHERE build_id = ${task.id}::text`,
        );
      expect(rows).toEqual([{ id: (task.result as any).build_variant_id, model: 'gpt-4o-mini', input_tokens: 142, output_tokens: 38 }]);
    });

    test('a 503 or a 429 from the model is retried after a pause; the build completes', async () => {
      queue.length = seen.length = 0;
      queue.push({ status: 503, body: '{"error":{"message":"overloaded"}}' });
      expect((await build()).status).toBe('completed');
      expect(seen).toHaveLength(2);
      queue.push({ status: 429, body: '{"error":{"message":"slow down"}}', headers: { 'retry-after': '0' } });
      expect((await build()).status).toBe('completed');
      expect(seen).toHaveLength(4);
    });

    test('malformed copy, a slow answer or a refused key end the task as SERVICE_UNAVAILABLE, never a 500', async () => {
      for (const [answers, calls, message] of [
        [
          [{ body: completion('Here is your copy: Rocket Skates!') }, { body: completion('{"headline": ""}') }],
          2,
          'something other than the requested JSON copy',
        ],
        [[{ body: 'not json at all' }, { body: '{"choices": []}' }], 2, 'something other than the requested JSON copy'],
        [[{ delayMs: MODEL_TIMEOUT_MS * 3 }, { delayMs: MODEL_TIMEOUT_MS * 3 }], 2, 'did not answer'],
        [[{ status: 401, body: '{"error":{"message":"bad key"}}' }], 1, 'refused the request (HTTP 401); check CREATIVE_MODEL and CREATIVE_MODEL_API_KEY'],
      ] as const) {
        queue.length = seen.length = 0;
        queue.push(...answers);
        const task = await build();
        expect(task.status).toBe('failed');
        const error = (task.result as any).errors?.[0] ?? (task.result as any).error;
        expect(error.code).toBe('SERVICE_UNAVAILABLE');
        expect(error.message).toContain(message);
        expect(seen).toHaveLength(calls);
      }
    });
  },
);

test('a half-configured model is a configuration error naming the missing variable', async () => {
  const { resolveOptions } = await import('../../core/plugin.ts');
  const creative = (await import('../../plugins/creative/index.ts')).default;
  expect(() => resolveOptions(creative(), { CREATIVE_MODEL_URL: 'https://models.example/v1' })).toThrow('CREATIVE_MODEL');
  expect(() => resolveOptions(creative(), { CREATIVE_MODEL: 'gpt-4o-mini' })).toThrow('CREATIVE_MODEL_URL');
});
