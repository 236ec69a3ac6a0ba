import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { requestContext } from '../../core/task.ts';
import type { Principal } from '../../core/ports/auth.ts';
import { TaskGateway, type Admission, type TaskGatewayPort, type TaskOutcome } from '../../core/ports/task-gateway.ts';
import { challenge, mountUrls, protectedResourceRoutes } from '../shared/auth-discovery.ts';
import { signedRequest } from '../../lib/rfc9421/request.ts';
import { accepts } from './accept.ts';
import { readMcpBody } from '../shared/mcp-edge.ts';
import { answer, mirroredResult, plan, type FastHandlers } from '../shared/mcp-fast-path.ts';
import { sdkServerSide } from '../shared/mcp-sdk-server.ts';
import { addTaskMethods, AUTH_ERROR_CODE } from './tasks.ts';

const mount = v.object({
  /** Where the Streamable HTTP endpoint is served (`/mcp`, `/signals/mcp`). */
  path: v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9/_-]*$/, 'must be an absolute path')),
  /** Protocol groups served there (default: every task). */
  protocols: v.optional(v.array(v.string())),
  /**
   * Answer every message with a per-request SDK server, never with the fast path (hosts/shared/mcp-fast-path.ts,
   * same bytes). For the test that compares the two.
   */
  sdk: v.optional(v.boolean(), false),
});

const options = v.object({
  mounts: v.optional(v.array(mount), [{ path: '/mcp' }]),
  /** Answer with one JSON body even to clients that accept an SSE stream. */
  jsonResponse: v.optional(v.boolean(), false),
  /** How long tasks/result waits for a running task before telling the client to poll (below the 30 s idle timeout). */
  taskResultWaitMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(25_000)), 20_000),
});

/** What every request of one mount shares: the tool list is built once. */
interface MountShared {
  /** serverInfo of initialize. */
  info: { name: string; version: string };
  protocols: readonly string[] | undefined;
  /** The mount's path: the protected resource OAuth tokens must be minted for. */
  resource: string;
  /** tools/list answer, computed on first use (tasks are all registered by then). */
  tools?: unknown[];
}

// Tasks: tasks/get, tasks/result, tasks/list and tasks/cancel on the ids deferred calls answer (./tasks.ts).
const CAPABILITIES = { tools: { listChanged: false }, tasks: { list: {}, cancel: {} } };

function toolList(gateway: TaskGatewayPort, shared: MountShared) {
  return (shared.tools ??= gateway.describe(shared.protocols).map((task) => ({
    name: task.name,
    description: task.description,
    inputSchema: task.inputSchema as { type: 'object'; [k: string]: unknown },
    annotations: { readOnlyHint: !task.mutating, idempotentHint: task.mutating },
  })));
}

/** The payload JSON is the text content; structuredContent carries the same object. */
const toolCallResult = (outcome: TaskOutcome) => mirroredResult(outcome.body, !outcome.ok);

/**
 * What one request's server answers to initialize, tools/list and tools/call: the fast path and the
 * SDK server share it (a class: a request allocates no closures for it).
 */
class RequestHandlers implements FastHandlers {
  readonly serverInfo: { name: string; version: string };
  readonly capabilities = CAPABILITIES;

  constructor(
    private readonly gateway: TaskGatewayPort,
    private readonly shared: MountShared,
    private readonly authorization: string | null,
    private readonly principal: Principal | null,
  ) {
    this.serverInfo = shared.info;
  }

  listTools() {
    return { tools: toolList(this.gateway, this.shared) };
  }

  callTool(params: { name: string; arguments?: Record<string, unknown> }) {
    return this.gateway
      .invoke({
        name: params.name,
        input: params.arguments ?? {},
        authorization: this.authorization,
        protocols: this.shared.protocols,
        admitted: { principal: this.principal },
        resource: this.shared.resource,
      })
      .then(toolCallResult);
  }
}

const rpcError = (status: number, code: number, message: string, id: unknown = null, headers: Record<string, string> = {}, data?: unknown) =>
  Response.json({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } }, { status, headers });

/** Task calls and task-record methods of a JSON-RPC message (or batch): what admission needs to know. */
function callsOf(messages: unknown[]): { calls: { name: string; input: unknown }[]; needsPrincipal: boolean } {
  const calls: { name: string; input: unknown }[] = [];
  let needsPrincipal = false;
  for (const m of messages) {
    const method = m && typeof m === 'object' ? (m as { method?: unknown }).method : undefined;
    if (method === 'tools/call') {
      const params = ((m as { params?: any }).params ?? {}) as { name?: unknown; arguments?: unknown };
      calls.push({ name: String(params.name ?? ''), input: params.arguments ?? {} });
    } else if (typeof method === 'string' && method.startsWith('tasks/')) needsPrincipal = true;
  }
  return { calls, needsPrincipal };
}

/**
 * MCP host (Streamable HTTP, stateless), tools = tasks. Single initialize, tools/list and tools/call
 * requests and notifications take the fast path (hosts/shared/mcp-fast-path.ts, the SDK's bytes without an SDK server);
 * anything else gets a fresh SDK Server + transport.
 * `tools/call` answers with the task payload JSON in `content[0].text` and `structuredContent`;
 * failures set `isError` with `{code, message, errors, {ns}_error}`.
 *
 * Answers are an SSE stream for clients that accept `text/event-stream`, one JSON body for clients
 * that accept only `application/json` (Streamable HTTP allows either). Authentication (MCP
 * authorization spec, RFC 9728): `initialize`, `tools/list` and tasks callable anonymously
 * (`get_{ns}_capabilities`) need no credential; every other tool call and task method does. A
 * missing one, or an invalid one on any request, is HTTP 401 with a JSON-RPC error and a Bearer
 * `WWW-Authenticate` challenge (`resource_metadata` when the deployment has an OAuth issuer).
 */
export default definePlugin({
  name: 'host-mcp',
  deps: { gateway: TaskGateway, http: Http },
  options,
  init({ gateway, http }, kernel) {
    const { publicUrl, maxBodyBytes } = kernel.config.server;
    const ns = gateway.namespace;
    for (const m of kernel.options.mounts) {
      const shared: MountShared = { info: { name: kernel.config.name, version: '1.0.0' }, protocols: m.protocols, resource: m.path };
      const refuse = (request: Request, admission: Extract<Admission, { ok: false }>, id: unknown, context: unknown) => {
        const body = gateway.errorBody(admission.error, requestContext({ context }));
        const data = { [`${ns}_error`]: body[`${ns}_error`], ...(body.context ? { context: body.context } : {}) };
        const header = challenge(admission, gateway, mountUrls(kernel.config.server, request, m.path));
        return rpcError(401, AUTH_ERROR_CODE, admission.error.message, id, { 'www-authenticate': header }, data);
      };
      const serve = async (request: Request, principal: Principal | null, json: boolean, parsedBody: unknown) => {
        const authorization = request.headers.get('authorization');
        const sdk = await sdkServerSide();
        const server = await addTaskMethods(sdk.server(new RequestHandlers(gateway, shared, authorization, principal)), gateway, authorization, m.path, {
          resultWaitMs: kernel.options.taskResultWaitMs,
          resultPollMs: 250,
        });
        return sdk.handle(server, request, { json, maxBodyBytes, parsedBody });
      };
      const post = async (request: Request) => {
        const headers = request.headers;
        const accept = headers.get('accept');
        const sse = !kernel.options.jsonResponse && accepts(accept, 'text/event-stream', true);
        if (!sse && !accepts(accept, 'application/json')) return rpcError(406, -32000, 'Not Acceptable: accept application/json or text/event-stream');
        const read = await readMcpBody(request, maxBodyBytes);
        if (read instanceof Response) return read;
        const { bytes, body: parsed } = read;
        const messages = Array.isArray(parsed) ? parsed : [parsed];
        const { calls, needsPrincipal } = callsOf(messages);
        const admission = await gateway.admit({
          http: signedRequest(publicUrl, request, bytes),
          calls,
          needsPrincipal,
          protocols: m.protocols,
          resource: m.path,
        });
        if (!admission.ok) {
          const first = messages.find((x) => x && typeof x === 'object' && 'id' in x) as { id?: unknown } | undefined;
          return refuse(request, admission, first?.id ?? null, (calls[0]?.input as { context?: unknown } | undefined)?.context);
        }
        const fast = m.sdk ? null : plan(headers, parsed);
        // Awaited here: returning the promise from this async function would cost extra turns of the microtask queue.
        if (fast) return await answer(new RequestHandlers(gateway, shared, headers.get('authorization'), admission.principal), fast, sse);
        return serve(request, admission.principal, !sse, parsed);
      };
      // Stateless: no session to resume (GET would open an SSE stream that never ends) or delete.
      const notAllowed = () =>
        Response.json(
          { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed: this server is stateless; POST JSON-RPC messages' } },
          { status: 405, headers: { allow: 'POST' } },
        );
      http.add(
        { method: 'POST', path: m.path, handle: post },
        { method: 'GET', path: m.path, handle: notAllowed },
        { method: 'DELETE', path: m.path, handle: notAllowed },
        ...protectedResourceRoutes(gateway, kernel.config.server, m.path),
      );
    }
  },
});
