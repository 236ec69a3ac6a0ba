import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Preset } from '../../core/config.ts';
import { Http } from '../../core/http.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Database } from '../../core/ports/database.ts';
import { TaskGateway, type TaskDescription } from '../../core/ports/task-gateway.ts';
import { storage } from '../../config/storage.ts';
import { deploy, forEachAdapter, type Deployed } from '../support/deploy.ts';
import { newKey } from '../support/principals.ts';
import { offlineCrawler } from '../support/registry.ts';
import { settledFingerprint, tableFingerprint } from '../support/rows.ts';
import { anyJson, bodyText, contentType, deepJsonText, fromSchema, fuzzSettings, hostileShortString, oneHostileLeaf, plausible } from './arbitraries.ts';
import { describe as show, send, type FuzzRequest } from './http.ts';

/**
 * Every task on every host of every agent preset in config/ (MCP, A2A and REST mounts are read
 * from the routes the hosts registered): hostile arguments, envelopes, JSON-RPC frames and
 * bodies. A call may fail, but never as a server error (HTTP 5xx, JSON-RPC -32603, a task failing
 * with SERVICE_UNAVAILABLE, a leaked stack overflow), never hang, and a failed call writes nothing.
 */

const CONFIG = join(import.meta.dir, '../../config');
const { seed, numRuns } = fuzzSettings(120);
const budgetMs = Number(process.env.FUZZ_BUDGET_MS ?? 6000);

/** Agent presets: those whose deployment serves tasks. */
const presets: Array<{ file: string; preset: Preset }> = [];
for (const file of readdirSync(CONFIG).filter((f) => f.endsWith('.ts'))) {
  const preset = (await import(join(CONFIG, file))).default as Preset | undefined;
  if (preset?.plugins && (await import('../../plugins/tasks/index.ts')) && preset.plugins.some((p) => typeof p === 'object' && p.definition.name === 'tasks')) {
    presets.push({ file, preset });
  }
}

interface Mounts {
  mcp: string[];
  a2a: string[];
  rest: string[];
}

function mountsOf(d: Deployed): Mounts {
  const routes = d.deployment
    .get(Http)
    .list()
    .filter((r) => r.method === 'POST');
  return {
    mcp: routes.filter((r) => r.path.endsWith('/mcp')).map((r) => r.path),
    a2a: routes.filter((r) => r.path.endsWith('/a2a')).map((r) => r.path),
    rest: routes.filter((r) => r.path.endsWith('/tasks/{name}')).map((r) => r.path),
  };
}

/** Arguments of a task: plausible, one hostile leaf, schema-shaped junk, or anything. */
const argumentsFor = (task: TaskDescription) =>
  fc
    .tuple(
      fc.oneof(
        { weight: 3, arbitrary: plausible(task.inputSchema) },
        { weight: 5, arbitrary: oneHostileLeaf(task.inputSchema) },
        { weight: 2, arbitrary: fromSchema(task.inputSchema) },
      ),
      fc.option(fc.constantFrom('fuzz-key-0000000000000001', 'fuzz-key-0000000000000002', 'bad key'), { freq: 2 }),
    )
    .map(([args, key]) => (args && typeof args === 'object' && !Array.isArray(args) && key && task.mutating ? { ...args, idempotency_key: key } : args));

type Host = 'mcp' | 'a2a' | 'rest';

function callFor(m: Mounts, tasks: readonly TaskDescription[], token: string): fc.Arbitrary<{ host: Host; r: FuzzRequest }> {
  const auth = fc.constantFrom<string | null>(`Bearer ${token}`, `Bearer ${token}`, `Bearer ${token}`, `Bearer ${token}`, null, 'Bearer nope-nope-nope-nope');
  const task = fc.constantFrom(...tasks);
  const headers = (a: string | null, extra: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    ...(a ? { authorization: a } : {}),
    ...extra,
  });
  const choices: fc.Arbitrary<{ host: Host; r: FuzzRequest }>[] = [];
  if (m.rest.length) {
    choices.push(
      fc.tuple(fc.constantFrom(...m.rest), task, auth, contentType).chain(([path, t, a, type]) =>
        fc
          .oneof({ weight: 5, arbitrary: argumentsFor(t).map((x) => JSON.stringify(x) ?? 'null') }, { weight: 1, arbitrary: bodyText(t.inputSchema) })
          .map((body) => ({
            host: 'rest' as const,
            r: { method: 'POST', path: path.replace('{name}', t.name), headers: { ...headers(a), ...(type ? { 'content-type': type } : {}) }, body },
          })),
      ),
    );
  }
  if (m.mcp.length) {
    const mcpHeaders = (a: string | null) => headers(a, { accept: 'application/json, text/event-stream' });
    choices.push(
      fc.tuple(fc.constantFrom(...m.mcp), task, auth).chain(([path, t, a]) =>
        argumentsFor(t).map((args) => ({
          host: 'mcp' as const,
          r: {
            method: 'POST',
            path,
            headers: mcpHeaders(a),
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: t.name, arguments: args } }),
          },
        })),
      ),
      // Any JSON-RPC frame at all, and deep ones.
      fc
        .tuple(
          fc.constantFrom(...m.mcp),
          auth,
          fc.constantFrom('tools/call', 'tools/list', 'tasks/get', 'initialize', 'ping', 'nope'),
          anyJson,
          anyJson,
          deepJsonText,
        )
        .chain(([path, a, method, id, params, deep]) =>
          fc
            .constantFrom(JSON.stringify({ jsonrpc: '2.0', id, method, params }) ?? 'null', `{"jsonrpc":"2.0","id":1,"method":"${method}","params":${deep}}`)
            .map((body) => ({ host: 'mcp' as const, r: { method: 'POST', path, headers: mcpHeaders(a), body } })),
        ),
    );
  }
  if (m.a2a.length) {
    choices.push(
      fc
        .tuple(
          fc.constantFrom(...m.a2a),
          task,
          auth,
          fc.option(hostileShortString, { freq: 3 }),
          fc.option(
            oneHostileLeaf({
              type: 'object',
              properties: {
                url: { type: 'string' },
                authentication: { type: 'object', properties: { schemes: { type: 'array', items: { type: 'string' } }, credentials: { type: 'string' } } },
              },
            }),
            { freq: 3 },
          ),
        )
        .chain(([path, t, a, contextId, push]) =>
          argumentsFor(t).map((input) => ({
            host: 'a2a' as const,
            r: {
              method: 'POST',
              path,
              headers: headers(a),
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: 1,
                method: 'message/send',
                params: {
                  message: {
                    kind: 'message',
                    messageId: 'm-1',
                    role: 'user',
                    ...(contextId !== null ? { contextId } : {}),
                    parts: [{ kind: 'data', data: { skill: t.name, input } }],
                  },
                  ...(push !== null ? { configuration: { pushNotificationConfig: push } } : {}),
                },
              }),
            },
          })),
        ),
      fc
        .tuple(
          fc.constantFrom(...m.a2a),
          auth,
          fc.constantFrom('message/send', 'tasks/get', 'tasks/cancel', 'SendMessage', 'GetTask', 'agent/getAuthenticatedExtendedCard', 'nope'),
          anyJson,
          fc.boolean(),
        )
        .map(([path, a, method, params, v1]) => ({
          host: 'a2a' as const,
          r: {
            method: 'POST',
            path,
            headers: headers(a, v1 ? { 'a2a-version': '1.0' } : {}),
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) ?? 'null',
          },
        })),
    );
  }
  return fc.oneof(...choices);
}

/** The JSON-RPC message of an MCP answer (JSON or one SSE event). */
function rpcMessage(text: string): any {
  const data =
    text.startsWith('event:') || text.startsWith('data:')
      ? text
          .split('\n')
          .find((l) => l.startsWith('data: '))
          ?.slice(6)
      : text;
  try {
    return data ? JSON.parse(data) : null;
  } catch {
    return null;
  }
}

/** Did the call fail (so it must have written nothing)? Throws on a server error. */
function judge(host: Host, status: number, text: string, what: string): boolean {
  if (status >= 500) throw new Error(`${status} for ${what}: ${text.slice(0, 300)}`);
  if (/Maximum call stack|stack depth/i.test(text)) throw new Error(`stack overflow leaked for ${what}: ${text.slice(0, 300)}`);
  if (text.includes('"SERVICE_UNAVAILABLE"')) throw new Error(`task failed unexpectedly for ${what}: ${text.slice(0, 300)}`);
  if (host === 'rest') return status >= 400;
  const msg = rpcMessage(text);
  if (msg?.error?.code === -32603) throw new Error(`JSON-RPC internal error for ${what}: ${text.slice(0, 300)}`);
  if (status >= 400 || !msg || msg.error) return true;
  if (host === 'mcp') return msg.result?.isError === true;
  const state = msg.result?.status?.state;
  return state === 'failed' || state === 'rejected';
}

for (const { file, preset } of presets) {
  forEachAdapter(`fuzz: tasks of ${file}`, (adapter) => {
    describe(`fuzz: tasks of ${file} [${adapter}]`, () => {
      let d: Deployed;
      let token: string;
      beforeAll(async () => {
        d = await deploy(
          adapter,
          preset.plugins.filter((p) => p !== storage),
          { serve: true, overrides: [[Crawler, offlineCrawler]] },
        );
        token = (await newKey(d.deployment, 'member')).key;
      });
      afterAll(async () => d?.close());

      test('every task on every host: no server error, no hang, nothing written by a failed call', async () => {
        console.log(`fuzz seed ${seed} (${numRuns} runs, ${budgetMs} ms budget): FUZZ_SEED=${seed} bun run fuzz replays it`);
        const m = mountsOf(d);
        expect(m.mcp.length + m.a2a.length + m.rest.length).toBeGreaterThan(0);
        const tasks = d.deployment.get(TaskGateway).describe();
        const db = d.deployment.get(Database);
        let before = await tableFingerprint(db, d.schema!);
        const outcomes: Record<string, number> = {};
        await fc.assert(
          fc.asyncProperty(callFor(m, tasks, token), async ({ host, r }) => {
            const res = await send(d.base!, r);
            const failed = judge(host, res.status, res.text, show(r));
            outcomes[`${host} ${failed ? 'failed' : 'ok'}`] = (outcomes[`${host} ${failed ? 'failed' : 'ok'}`] ?? 0) + 1;
            const after = await tableFingerprint(db, d.schema!);
            if (failed) {
              const changed = Object.keys(after).filter((t) => after[t] !== before[t]);
              if (changed.length) throw new Error(`a failed call changed ${changed.join(', ')}: ${show(r)}`);
            }
            // A success may have woken background jobs (outbox, search index): judge the next call after them.
            before = failed ? after : await settledFingerprint(db, d.schema!, d.deployment.scheduler);
          }),
          { seed, numRuns, interruptAfterTimeLimit: budgetMs, markInterruptAsFailure: false },
        );
        console.log(`fuzz outcomes: ${JSON.stringify(outcomes)}`);
      });
    });
  });
}
