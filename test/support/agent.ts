import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientFactory } from '@a2a-js/sdk/client';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { TestServer } from './server.ts';

export type HostName = 'rest' | 'mcp' | 'a2a';
export const HOSTS: readonly HostName[] = ['rest', 'mcp', 'a2a'];

export type Body = Record<string, any>;
export interface CallResult {
  ok: boolean;
  body: Body;
}

/** One way of calling tasks on a running server; the same interface for the three hosts. */
export interface TaskClient {
  host: HostName;
  call(name: string, args: Record<string, unknown>): Promise<CallResult>;
  /** Poll a task: its status and (once final) its result body. */
  poll(taskId: string): Promise<{ status: string; result?: Body }>;
  close(): Promise<void>;
}

const STATE_NAMES: Record<number, string> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_FAILED]: 'failed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [TaskState.TASK_STATE_REJECTED]: 'rejected',
};

/** The AdCP body of an A2A Task: last DataPart of the first artifact, else the status message's DataPart. */
export function a2aBody(task: Task): Body {
  const fromParts = (parts: any[] | undefined) => [...(parts ?? [])].reverse().find((p) => p.content?.$case === 'data')?.content.value;
  return fromParts(task.artifacts?.[0]?.parts) ?? fromParts(task.status?.message?.parts) ?? {};
}

export function restClient(server: TestServer, token: string | null, prefix = ''): TaskClient {
  return {
    host: 'rest',
    async call(name, args) {
      const res = await server.fetch(`${prefix}/tasks/${name}`, { method: 'POST', json: args, token: token ?? undefined });
      return { ok: res.ok, body: (await res.json()) as Body };
    },
    async poll(taskId) {
      const body = (await (await server.fetch(`${prefix}/tasks/${taskId}`, { token: token ?? undefined })).json()) as Body;
      return { status: body.status, result: body.result };
    },
    async close() {},
  };
}

export async function mcpClient(server: TestServer, token: string | null, path = '/mcp'): Promise<TaskClient> {
  const client = new McpClient({ name: 'matrix-test', version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(server.base + path), { requestInit: { headers } }));
  const call = async (name: string, args: Record<string, unknown>): Promise<CallResult> => {
    const result = (await client.callTool({ name, arguments: args })) as any;
    const text = JSON.parse(result.content[0].text);
    // The text payload and structuredContent carry the same object.
    if (JSON.stringify(text) !== JSON.stringify(result.structuredContent)) throw new Error('MCP text and structuredContent differ');
    return { ok: !result.isError, body: text };
  };
  return {
    host: 'mcp',
    call,
    async poll(taskId) {
      const { body } = await call('get_task_status', { task_id: taskId });
      return { status: body.status, result: body.result };
    },
    close: () => client.close(),
  };
}

export async function a2aClient(server: TestServer, token: string | null, prefix = ''): Promise<TaskClient> {
  const client = await new ClientFactory().createFromUrl(server.base, `${prefix}/.well-known/agent-card.json`);
  const options = { serviceParameters: token ? { authorization: `Bearer ${token}` } : {} } as any;
  return {
    host: 'a2a',
    async call(name, args) {
      const task = (await client.sendMessage(
        {
          message: { messageId: crypto.randomUUID(), role: 1, parts: [{ content: { $case: 'data', value: { skill: name, input: args } } }] },
        } as any,
        options,
      )) as Task;
      const status = STATE_NAMES[task.status!.state]!;
      const body = a2aBody(task);
      return { ok: status !== 'failed' && status !== 'rejected', body: { ...body, status: body.status ?? status } };
    },
    async poll(taskId) {
      const task = await client.getTask({ id: taskId } as any, options);
      const status = STATE_NAMES[task.status!.state]!;
      const body = a2aBody(task);
      return { status, result: status === 'completed' || status === 'failed' ? body : undefined };
    },
    async close() {},
  };
}

export async function clientFor(host: HostName, server: TestServer, token: string | null): Promise<TaskClient> {
  if (host === 'rest') return restClient(server, token);
  if (host === 'mcp') return mcpClient(server, token);
  return a2aClient(server, token);
}
