import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, clientFor, type TaskClient } from '../support/agent.ts';
import { tableFingerprint } from '../support/rows.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from './fixture.ts';

const TTD = { type: 'platform', platform: 'the-trade-desk' };
const ACTIVATE = { signal_agent_segment_id: 'sig_auto_intenders_suv', deployments: [TTD] };
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };

/** [task, arguments, field the INVALID_REQUEST names]: strings Postgres cannot hold, anywhere in the arguments. */
const CASES: [string, Record<string, unknown>, string][] = [
  ['get_signals', { signal_spec: 'pets\u0000' }, 'signal_spec'],
  ['get_signals', { signal_spec: 'pets', context: { note: 'lone \ud800' } }, 'context.note'],
  ['activate_signal', { ...ACTIVATE, account: { account_id: 'a\u0000' }, idempotency_key: 'hostile-account-000000001' }, 'account.account_id'],
  ['activate_signal', { ...ACTIVATE, context: { ['k\udfff']: 1 }, idempotency_key: 'hostile-context-000000001' }, 'context'],
  ['activate_signal', { ...ACTIVATE, idempotency_key: 'hostile-key-\u0000-00000001' }, 'idempotency_key'],
];

/** A JSON text nested `depth` levels deep (built as text: JSON.stringify itself would overflow). */
const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

forEachDatabase<{ s: SignalsServer; schema: string }>(
  'hostile task arguments',
  async (adapter, schema) => ({ s: await startSignalsServer(adapter, schema), schema }),
  async ({ s }) => s.server.close(),
  (get) => {
    for (const host of HOSTS) {
      describe(host, () => {
        let client: TaskClient;
        beforeAll(async () => {
          client = await clientFor(host, get().s.server, TOKEN);
        });
        afterAll(async () => client?.close());

        test('NUL and lone surrogates anywhere in the arguments: INVALID_REQUEST naming the field, nothing stored', async () => {
          const db = get().s.server.deployment.get(Database);
          const before = await tableFingerprint(db, get().schema);
          for (const [task, args, field] of CASES) {
            const { ok, body } = await client.call(task, args);
            expect({ task, field, ok, code: body.code, named: body.field }).toEqual({ task, field, ok: false, code: 'INVALID_REQUEST', named: field });
          }
          expect(await tableFingerprint(db, get().schema)).toEqual(before);
        });
      });
    }

    test('REST: a 50,000-deep context is refused at the edge, naming where, not with a stack overflow', async () => {
      const res = await get().s.server.fetch('/tasks/get_signals', {
        method: 'POST',
        token: TOKEN,
        headers: { 'content-type': 'application/json' },
        body: `{"signal_spec":"pets","context":${deep(50_000)}}`,
      });
      const body = (await res.json()) as Record<string, any>;
      expect(res.status).toBe(400);
      expect(body.code).toBe('INVALID_REQUEST');
      expect(body.message).toMatch(/^context(\.a)+: nests deeper than 64 levels$/);
    });

    test('MCP: a 50,000-deep arguments.context is a JSON-RPC error naming the member, without "Maximum call stack"', async () => {
      const res = await get().s.server.fetch('/mcp', {
        method: 'POST',
        headers: MCP_HEADERS,
        body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_signals","arguments":{"signal_spec":"pets","context":${deep(50_000)}}}}`,
      });
      const text = await res.text();
      expect(res.status).toBe(400);
      expect(text).not.toContain('Maximum call stack');
      expect(JSON.parse(text).error).toMatchObject({
        code: -32600,
        message: expect.stringMatching(/^params\.arguments\.context(\.a)+: nests deeper than 64 levels$/),
      });
    });

    test('MCP: invalid tools/call params answer -32602 naming the member, not -32603 with a validator dump', async () => {
      for (const [params, where] of [
        [{ name: 'get_signals', arguments: 'pets' }, 'params.arguments'],
        [{ arguments: {} }, 'params.name'],
        [{ name: 5 }, 'params.name'],
      ] as const) {
        const res = await get().s.server.fetch('/mcp', {
          method: 'POST',
          headers: MCP_HEADERS,
          body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params }),
        });
        const reply = (await res.json()) as { id: number; error: { code: number; message: string } };
        expect(reply.id).toBe(3);
        expect(reply.error.code).toBe(-32602);
        expect(reply.error.message).toStartWith(`Invalid params: ${where}: `);
        expect(reply.error.message).not.toContain('\n');
      }
    });

    test('A2A: frames the SDK cannot translate are -32602, polling with a bad credential -32028, never -32603', async () => {
      const rpc = async (method: string, params: unknown, token: string | null = TOKEN) => {
        const res = await get().s.server.fetch('/a2a', { method: 'POST', token: token ?? undefined, json: { jsonrpc: '2.0', id: 9, method, params } });
        return ((await res.json()) as { error?: { code: number; message: string } }).error;
      };
      const message = {
        kind: 'message',
        messageId: 'm-1',
        role: 'user',
        parts: [{ kind: 'data', data: { skill: 'get_signals', input: { signal_spec: 'pets' } } }],
      };
      // Found by the fuzz suite: `schemes` as a string crashed the SDK's 0.3 translation.
      expect(
        await rpc('message/send', {
          message,
          configuration: { pushNotificationConfig: { url: 'https://b.example/h', authentication: { schemes: 'Bearer' } } },
        }),
      ).toMatchObject({
        code: -32602,
      });
      expect(await rpc('message/send', { message: { ...message, extensions: 5 } })).toMatchObject({ code: -32602 });
      expect(await rpc('tasks/get', { id: 'x' }, 'not-a-valid-token-at-all')).toMatchObject({ code: -32028 });
      expect(await rpc('tasks/cancel', { id: 'x' }, 'not-a-valid-token-at-all')).toMatchObject({ code: -32028 });
      expect(await rpc('tasks/cancel', {})).toMatchObject({ code: -32602, message: 'params.id: is required' });
      expect(await rpc('tasks/get', { id: 5 })).toMatchObject({ code: -32602, message: expect.stringMatching(/^params\.id: /) });
    });

    test('A2A: a NUL in message.contextId fails the task naming the field; nothing stored', async () => {
      const db = get().s.server.deployment.get(Database);
      const before = await tableFingerprint(db, get().schema);
      const res = await get().s.server.fetch('/a2a', {
        method: 'POST',
        token: TOKEN,
        json: {
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              messageId: crypto.randomUUID(),
              role: 'user',
              contextId: 'ctx\u0000',
              parts: [{ kind: 'data', data: { skill: 'activate_signal', input: { ...ACTIVATE, idempotency_key: 'hostile-contextid-00000001' } } }],
            },
          },
        },
      });
      const task = ((await res.json()) as { result: { status: { state: string }; artifacts: Array<{ parts: Array<{ kind: string; data?: any }> }> } }).result;
      expect(task.status.state).toBe('failed');
      expect(task.artifacts[0]!.parts.find((p) => p.kind === 'data')?.data).toMatchObject({ code: 'INVALID_REQUEST', field: 'message.contextId' });
      expect(await tableFingerprint(db, get().schema)).toEqual(before);
    });
  },
);
