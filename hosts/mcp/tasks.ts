import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ProtocolError } from '../../core/errors.ts';
import type { TaskGatewayPort } from '../../core/ports/task-gateway.ts';
import { TERMINAL_STATUSES, type TaskRecord, type TaskStatus } from '../../core/ports/tasks.ts';
import { mirroredResult } from '../shared/mcp-fast-path.ts';
import { INVALID_PARAMS, sdkTypes } from '../shared/mcp-protocol.ts';

/** MCP task status names (snake_case, one `cancelled`) for our task statuses. */
const MCP_STATUS: Record<TaskStatus, 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'> = {
  submitted: 'working',
  working: 'working',
  'input-required': 'input_required',
  completed: 'completed',
  failed: 'failed',
  rejected: 'failed',
  canceled: 'cancelled',
};

/** JSON-RPC error code for authentication failures (transport-error-mapping vectors). */
export const AUTH_ERROR_CODE = -32028;
/** Server error (JSON-RPC implementation-defined range): the task is still running when tasks/result stops waiting. */
const STILL_RUNNING = -32000;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
/** Suggested tasks/get interval. */
const POLL_INTERVAL_MS = 1000;

export interface TaskMethodOptions {
  /**
   * How long tasks/result waits for a running task to end. Below the server's idle timeout (30 s): a JSON
   * answer writes nothing while it waits. After it the client is told to poll tasks/get and ask again.
   */
  resultWaitMs: number;
  /** How often a waiting tasks/result reads the task store (the task may finish on another instance). */
  resultPollMs: number;
}

/** The MCP Task object of a record; the id is the one the AdCP answer named (`task_id`). */
function mcpTask(task: TaskRecord) {
  return {
    taskId: task.handle ?? task.id,
    status: MCP_STATUS[task.status],
    ttl: null,
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: task.updatedAt.toISOString(),
    pollInterval: POLL_INTERVAL_MS,
    ...(task.message ? { statusMessage: task.message } : {}),
  };
}

/** Wait `ms`, or less when the request is aborted (the client went away). */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * MCP tasks (spec 2025-11-25: tasks/get, tasks/result, tasks/list, tasks/cancel) over the durable task store, for the
 * task ids our deferred calls answer (`status: submitted`, `task_id`): every instance sees every task, and each method
 * is scoped to the caller (another principal's task is "not found"). Calls are not task-augmented (`params.task`):
 * a call that must wait says so in its AdCP answer, and the client polls that id here.
 */
export async function addTaskMethods(server: Server, gateway: TaskGatewayPort, authorization: string | null, resource: string, options: TaskMethodOptions) {
  const ns = gateway.namespace;
  const { GetTaskRequestSchema, GetTaskPayloadRequestSchema, ListTasksRequestSchema, CancelTaskRequestSchema, McpError } = await sdkTypes();

  /** Gateway errors as JSON-RPC errors: authentication keeps its code and AdCP body, a bad cursor is invalid params. */
  const mapped = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      if (error.code === 'INVALID_REQUEST') throw new McpError(INVALID_PARAMS, `Invalid params: ${error.message}`);
      throw new McpError(AUTH_ERROR_CODE, error.message, { [`${ns}_error`]: error.toTaskError() });
    }
  };
  const found = async (taskId: string) => {
    const task = await mapped(() => gateway.getTask(taskId, authorization, resource));
    if (!task) throw new McpError(INVALID_PARAMS, `Task ${taskId} not found`);
    return task;
  };

  server.setRequestHandler(GetTaskRequestSchema, async (request) => mcpTask(await found(request.params.taskId)) as any);

  // The result of the call the task stands for: the AdCP body it ended with, as tools/call would have answered it.
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    let task = await found(taskId);
    for (let waited = 0; !TERMINAL_STATUSES.has(task.status); waited += options.resultPollMs) {
      if (waited >= options.resultWaitMs || extra.signal.aborted) {
        throw new McpError(STILL_RUNNING, `Task ${taskId} is still ${MCP_STATUS[task.status]}: poll tasks/get and ask for the result once it ends`);
      }
      await sleep(options.resultPollMs, extra.signal);
      task = await found(taskId);
    }
    const body =
      task.status === 'canceled'
        ? gateway.errorBody(new ProtocolError('CONFLICT', `Task ${taskId} was canceled`, { recovery: 'terminal' }))
        : (task.result ?? {});
    const result = mirroredResult(body, task.status !== 'completed');
    return { ...result, _meta: { [RELATED_TASK]: { taskId } } } as any;
  });

  server.setRequestHandler(ListTasksRequestSchema, async (request) => {
    const page = await mapped(() => gateway.listTasks(authorization, resource, request.params?.cursor));
    return { tasks: page.tasks.map(mcpTask), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as any;
  });

  server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
    const { taskId } = request.params;
    const task = await found(taskId);
    // The spec has a terminal task's cancellation refused as invalid params.
    if (TERMINAL_STATUSES.has(task.status)) throw new McpError(INVALID_PARAMS, `Task ${taskId} is already ${MCP_STATUS[task.status]}`);
    const canceled = await mapped(() => gateway.cancelTask(task.id, authorization, resource));
    if (!canceled) throw new McpError(INVALID_PARAMS, `Task ${taskId} not found`);
    return mcpTask(canceled) as any;
  });
  return server;
}
