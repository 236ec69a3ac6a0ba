import * as v from 'valibot';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, GetTaskRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { Tasks } from '../../core/task.ts';
import { invokeTask, resolvePrincipal, type InvokeDeps } from '../../core/task-invoke.ts';
import { ProtocolError } from '../../core/errors.ts';
import { bearerToken } from '../../core/ports/auth.ts';
import type { TaskStatus } from '../../core/ports/tasks.ts';
import { taskDeps } from '../tasks/deps.ts';
import { taskInputJsonSchema } from '../tasks/schema.ts';

const mount = v.object({
  /** Where the Streamable HTTP endpoint is served (`/mcp`, `/signals/mcp`). */
  path: v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9/_-]*$/, 'must be an absolute path')),
  /** Protocol groups served there (default: every task). */
  protocols: v.optional(v.array(v.string())),
});

const options = v.object({
  mounts: v.optional(v.array(mount), [{ path: '/mcp' }]),
  /** Answer with one JSON body instead of an SSE stream (clients must accept both). */
  jsonResponse: v.optional(v.boolean(), false),
});

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
const AUTH_ERROR_CODE = -32028;

/** What every per-request server of one mount shares: built once, since stateless mode needs a server per request. */
interface MountShared {
  name: string;
  protocols: readonly string[] | undefined;
  /** One schema validator (the SDK's default builds a fresh Ajv per server, the costliest part of a request). */
  validator: AjvJsonSchemaValidator;
  /** tools/list answer, computed on first use (tasks are all registered by then). */
  tools?: unknown[];
}

function toolList(deps: InvokeDeps, shared: MountShared) {
  return (shared.tools ??= deps.registry.list(shared.protocols).map((task) => ({
    name: task.name,
    description: task.description,
    inputSchema: taskInputJsonSchema(task) as { type: 'object'; [k: string]: unknown },
    annotations: { readOnlyHint: !task.mutating, idempotentHint: !!task.mutating },
  })));
}

function buildServer(deps: InvokeDeps, shared: MountShared, credential: string | null): Server {
  const { protocols } = shared;
  const server = new Server(
    { name: shared.name, version: '1.0.0' },
    { capabilities: { tools: { listChanged: false }, tasks: {} }, jsonSchemaValidator: shared.validator },
  );
  const ns = deps.registry.namespace;

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList(deps, shared) as any }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const outcome = await invokeTask(deps, { name: request.params.name, input: request.params.arguments ?? {}, credential, protocols });
    // The payload JSON is the text content; structuredContent carries the same object.
    return {
      content: [{ type: 'text' as const, text: JSON.stringify(outcome.body) }],
      structuredContent: outcome.body,
      ...(outcome.ok ? {} : { isError: true }),
    };
  });

  // MCP-native polling of the task ids our asynchronous calls return; the AdCP status body rides in _meta.
  server.setRequestHandler(GetTaskRequestSchema, async (request) => {
    let principal;
    try {
      principal = await resolvePrincipal(deps.auth, credential);
    } catch (error) {
      const e = error as ProtocolError;
      throw new McpError(AUTH_ERROR_CODE, e.message, { [`${ns}_error`]: e.toTaskError() });
    }
    const task = deps.store ? await deps.store.get(request.params.taskId, principal.id) : null;
    if (!task) throw new McpError(-32602, `Task ${request.params.taskId} not found`);
    return {
      taskId: task.id,
      status: MCP_STATUS[task.status],
      ttl: null,
      createdAt: task.createdAt.toISOString(),
      lastUpdatedAt: task.updatedAt.toISOString(),
      pollInterval: 1000,
      ...(task.message ? { statusMessage: task.message } : {}),
    };
  });
  return server;
}

/**
 * MCP host (Streamable HTTP, stateless): a fresh Server + transport per request, tools = tasks.
 * `tools/call` answers with the task payload JSON in `content[0].text` and `structuredContent`;
 * failures set `isError` with `{code, message, errors, {ns}_error}`.
 */
export default definePlugin({
  name: 'host-mcp',
  requires: [Tasks],
  options,
  start(ctx) {
    const deps = taskDeps(ctx);
    const http = ctx.get(Http);
    for (const m of ctx.options.mounts) {
      const shared: MountShared = { name: ctx.config.name, protocols: m.protocols, validator: new AjvJsonSchemaValidator() };
      const handle = async (request: Request) => {
        const credential = bearerToken(request.headers.get('authorization'));
        const server = buildServer(deps, shared, credential);
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: ctx.options.jsonResponse,
          maxRequestBodySize: ctx.config.server.maxBodyBytes,
        });
        await server.connect(transport);
        return transport.handleRequest(request);
      };
      http.add({ method: 'POST', path: m.path, handle }, { method: 'GET', path: m.path, handle }, { method: 'DELETE', path: m.path, handle });
    }
  },
});
