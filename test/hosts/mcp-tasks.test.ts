import { expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { OTHER_TOKEN, startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import mcpHost from '../../hosts/mcp/index.ts';

/** Each activation needs a target the signal is deployable to and not yet live on. */
const TARGETS = [
  ...['the-trade-desk', 'dv360', 'xandr', 'amazon-dsp'].map((platform) => ({ signal: 'sig_travel_cruise_intenders', platform })),
  ...['the-trade-desk', 'yahoo-dsp', 'xandr', 'amazon-dsp'].map((platform) => ({ signal: 'sig_auto_intenders_suv', platform })),
];

/** The MCP TypeScript SDK's own client over Streamable HTTP on loopback. */
async function connect(s: SignalsServer | TestServer, token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-tasks-test', version: '1.0.0' });
  const headers = { authorization: `Bearer ${token}` };
  const base = 'runDue' in s ? s.server.base : s.base;
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  return client;
}

interface Instances {
  /** The signals agent (its worker off: tests run due steps). */
  s: SignalsServer;
  /** A second instance on the same database that only serves MCP, waiting at most 300 ms in tasks/result. */
  other: TestServer;
}

/** An activation answered `submitted` (deferred): the task id the AdCP answer names. */
async function deferred(client: Client, key: string, target: { signal: string; platform: string }): Promise<string> {
  const result = (await client.callTool({
    name: 'activate_signal',
    arguments: { signal_agent_segment_id: target.signal, deployments: [{ type: 'platform', platform: target.platform }], idempotency_key: key },
  })) as any;
  if (result.isError) throw new Error(JSON.stringify(result.structuredContent));
  expect(result.structuredContent.status).toBe('submitted');
  return result.structuredContent.task_id;
}

forEachDatabase<Instances>(
  'MCP tasks (SDK client)',
  async (adapter, schema) => {
    const s = await startSignalsServer(adapter, schema);
    const other = await startServer(adapter, schema, [
      auth({ testTokens: [{ token: TOKEN }, { token: OTHER_TOKEN, name: 'other' }] }),
      tasks({ worker: false }),
      idempotency(),
      mcpHost({ taskResultWaitMs: 300 }),
    ]);
    return { s, other };
  },
  async ({ s, other }) => {
    await other.close();
    await s.server.close();
  },
  (instances) => {
    const get = () => instances().s;
    test('initialize advertises tasks/list and tasks/cancel, not task-augmented calls', async () => {
      const client = await connect(get(), TOKEN);
      expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {} });
      await client.close();
    });

    test('a deferred call: tasks/get while working, tasks/result waits for the end and answers the call result', async () => {
      const client = await connect(get(), TOKEN);
      const taskId = await deferred(client, 'mcp-tasks-result-0001', TARGETS[0]!);
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'working', ttl: null });
      // tasks/result blocks until the task ends (here: when the worker step runs).
      const pending = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      await Bun.sleep(300);
      await get().runDue();
      const result = (await pending) as any;
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent.deployments[0].is_live).toBe(true);
      expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
      expect(result._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId });
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
      await client.close();
    });

    test('tasks/list pages through the caller’s tasks only, newest first', async () => {
      const client = await connect(get(), TOKEN);
      const ids = [await deferred(client, 'mcp-tasks-list-00001', TARGETS[1]!), await deferred(client, 'mcp-tasks-list-00002', TARGETS[2]!)];
      const listed = await client.experimental.tasks.listTasks();
      const mine = listed.tasks.map((t) => t.taskId);
      expect(mine.slice(0, 2)).toEqual([ids[1]!, ids[0]!]);
      for (const t of listed.tasks) expect(['working', 'completed', 'failed', 'cancelled', 'input_required']).toContain(t.status);
      const other = await connect(get(), OTHER_TOKEN);
      const theirs = await other.experimental.tasks.listTasks();
      expect(theirs.tasks.map((t) => t.taskId)).not.toContain(ids[0]!);
      await expect(other.experimental.tasks.listTasks('not-a-cursor')).rejects.toThrow(/cursor/);
      await other.close();
      await client.close();
    });

    test('tasks/cancel ends a working task; a second cancel and its result say so', async () => {
      const client = await connect(get(), TOKEN);
      const taskId = await deferred(client, 'mcp-tasks-cancel-0001', TARGETS[3]!);
      expect(await client.experimental.tasks.cancelTask(taskId)).toMatchObject({ taskId, status: 'cancelled' });
      await get().runDue();
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'cancelled' });
      await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/already cancelled/);
      const result = (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as any;
      expect(result.isError).toBe(true);
      expect(result.structuredContent.errors[0].message).toMatch(/canceled/);
      await client.close();
    });

    test('another account’s task is not found by tasks/get, tasks/result or tasks/cancel, and stays running', async () => {
      const owner = await connect(get(), TOKEN);
      const taskId = await deferred(owner, 'mcp-tasks-foreign-001', TARGETS[4]!);
      const other = await connect(get(), OTHER_TOKEN);
      await expect(other.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/);
      await expect(other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toThrow(/not found/);
      await expect(other.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/not found/);
      expect(await owner.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'working' });
      await other.close();
      await owner.close();
    });

    test('another instance answers for the task; a task still running past the wait is an error telling the client to poll', async () => {
      const owner = await connect(get(), TOKEN);
      const taskId = await deferred(owner, 'mcp-tasks-instance-01', TARGETS[5]!);
      const elsewhere = await connect(instances().other, TOKEN);
      expect(await elsewhere.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'working' });
      await expect(elsewhere.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toThrow(/still working: poll tasks\/get/);
      // The step runs on the first instance; the second one's tasks/result sees it end in the database.
      const pending = elsewhere.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      await get().runDue();
      expect(((await pending) as any).structuredContent.deployments[0].is_live).toBe(true);
      expect((await elsewhere.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(taskId);
      await elsewhere.close();
      await owner.close();
    });

    test('without a credential every tasks/* method is 401 with a Bearer challenge', async () => {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']) {
        const params = method === 'tasks/list' ? {} : { taskId: '0195f0c0-0000-7000-8000-000000000001' };
        const res = await fetch(`${get().server.base}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    });
  },
);
