import { expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { forEachDatabase } from '../support/db.ts';
import { OTHER_TOKEN, startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';

/** Each activation needs a target the signal is not yet live on. */
const TARGETS = ['the-trade-desk', 'amazon-dsp', 'dv360', 'xandr'].flatMap((platform) =>
  ['sig_travel_cruise_intenders', 'sig_auto_intenders_suv'].map((signal) => ({ signal, platform })),
);

/** The MCP TypeScript SDK's own client over Streamable HTTP on loopback. */
async function connect(s: SignalsServer, token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-tasks-test', version: '1.0.0' });
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.server.base}/mcp`), { requestInit: { headers } }));
  return client;
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

forEachDatabase(
  'MCP tasks (SDK client)',
  async (adapter, schema) => startSignalsServer(adapter, schema),
  async (s) => s.server.close(),
  (get) => {
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
