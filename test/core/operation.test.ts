/**
 * The one operation pipeline (core/operation.ts): stage order, re-runnable continuations, the
 * assembly check that every declared stage has a provider, and a task's declared rate limit counted
 * by the real limiter on a real database.
 */
import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { definePlugin } from '../../core/plugin.ts';
import { defineEndpoint, Endpoints } from '../../core/endpoint.ts';
import { defineTask, Tasks } from '../../core/task.ts';
import { operationPipeline, type Stage } from '../../core/operation.ts';
import { TaskGateway } from '../../core/ports/task-gateway.ts';
import auth from '../../plugins/auth/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';

const env = { LOG_LEVEL: 'silent' };
const stage = (name: Stage<string[], string>['name'], log: string[]): Stage<string[], string> => ({
  name,
  run: async (s, next) => {
    log.push(name);
    return next(s);
  },
});

test('stages run in pipeline order; an out-of-order or repeated stage is refused when the pipeline is built', async () => {
  expect(() => operationPipeline([stage('validate', []), stage('auth', [])])).toThrow('"auth" is out of order or repeated');
  expect(() => operationPipeline([stage('auth', []), stage('auth', [])])).toThrow('"auth" is out of order or repeated');
  const log: string[] = [];
  const run = operationPipeline<string[], string>([stage('auth', log), stage('limits', log), { name: 'respond', run: async () => 'done' }]);
  expect(await run([])).toBe('done');
  expect(log).toEqual(['auth', 'limits']);
});

test('a stage may run the rest of the pipeline again (a retried transaction)', async () => {
  let handled = 0;
  const run = operationPipeline<null, number>([
    {
      name: 'idempotency',
      run: async (s, next) => {
        await next(s).catch(() => undefined);
        return next(s);
      },
    },
    {
      name: 'handler',
      run: async () => {
        if (++handled === 1) throw new Error('first run fails');
        return handled;
      },
    },
  ]);
  expect(await run(null)).toBe(2);
});

const limitedEndpoint = definePlugin({
  name: 'limited-endpoint',
  deps: { endpoints: Endpoints },
  init({ endpoints }) {
    endpoints.add(
      defineEndpoint({
        method: 'GET',
        path: '/limited',
        summary: 'limited',
        rateLimits: [{ name: 'limited', per: 'ip', limit: 5, windowSeconds: 60 }],
        handler: () => ({ ok: true }),
      }),
    );
  },
});

test('a rate limit declared without a limiter fails assembly, naming the operation and the port', async () => {
  await expect(assemble(definePreset({ name: 'p', plugins: [limitedEndpoint()] }), { env })).rejects.toThrow(
    'Operation GET /limited declares the limits stage but no plugin provides port "core.rate-limiter" (add the rate-limit plugin)',
  );
});

const TOKEN = 'operation-test-token-0123456789';
const limitedTask = definePlugin({
  name: 'limited-task',
  deps: { tasks: Tasks },
  init({ tasks }) {
    tasks.add(
      defineTask({
        name: 'ping_limited',
        description: 'answers pong, twice a minute per caller',
        protocol: 'test',
        input: v.object({}),
        rateLimits: [{ name: 'ping', per: 'principal', limit: 2, windowSeconds: 60 }],
        handler: () => ({ pong: true }),
      }),
    );
  },
});

test('a task declaring a rate limit without a limiter fails assembly too', async () => {
  await expect(deploy('pglite', [auth({ testTokens: [{ token: TOKEN }] }), idempotency(), tasks(), limitedTask()])).rejects.toThrow(
    'Operation task ping_limited declares the limits stage but no plugin provides port "core.rate-limiter"',
  );
});

forEachAdapter('task rate limits', (adapter) => {
  test('a task rate limit counts per caller in the shared limiter and refuses with RATE_LIMITED', async () => {
    const d = await deploy(adapter, [auth({ testTokens: [{ token: TOKEN }] }), idempotency(), rateLimit(), tasks(), limitedTask()]);
    try {
      const gateway = d.deployment.get(TaskGateway);
      const call = () => gateway.invoke({ name: 'ping_limited', input: {}, authorization: `Bearer ${TOKEN}` });
      expect((await call()).ok).toBe(true);
      expect((await call()).ok).toBe(true);
      const refused = await call();
      expect(refused.ok).toBe(false);
      expect(refused.ok ? null : refused.error.code).toBe('RATE_LIMITED');
    } finally {
      await d.close();
    }
  });
});
