import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import { INTERNAL_ERROR, INVALID_PARAMS, LATEST_PROTOCOL_VERSION, sdkTypes, SUPPORTED_PROTOCOL_VERSIONS } from './mcp-protocol.ts';

/**
 * The stateless Streamable HTTP answers of the MCP SDK (`Server` + `WebStandardStreamableHTTPServerTransport`,
 * SDK 1.32) for the messages nearly every request carries, without building a server and transport per
 * request: one `initialize`, `tools/list` or `tools/call` request, or one notification. `plan` accepts only
 * messages whose SDK handling is known byte for byte and returns null for anything else (batches, other
 * methods, `params.task`, a non-JSON Content-Type, ...), which the caller hands to the SDK.
 * test/hosts/mcp-fast-path.test.ts sends every case to both and compares the bytes.
 */

/** What the SDK server of a mount answers; the SDK path is built from the same functions. */
export interface FastHandlers {
  /** `serverInfo` and `capabilities` of the initialize result. */
  serverInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
  listTools(): unknown;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Record<string, unknown>>;
}

export type FastPlan =
  | { kind: 'notification' }
  | { kind: 'initialize'; id: string | number; protocolVersion: string }
  | { kind: 'tools/list'; id: string | number }
  | { kind: 'tools/call'; id: string | number; params: { name: string; arguments?: Record<string, unknown> } };

const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  x !== null && typeof x === 'object' && !Array.isArray(x) && Object.getPrototypeOf(x) === Object.prototype;

/** Members the SDK's strict JSON-RPC request/notification schemas allow at the top level. */
const ENVELOPE = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * Whether the fast path answers this POST (already admitted, its params already checked by readMcpBody
 * against the method's SDK schema), and how. Null: the SDK answers it.
 */
export function plan(headers: Headers, body: unknown): FastPlan | null {
  // The SDK answers 415 to a missing or non-JSON Content-Type (readJsonBytes lets a missing one through).
  if (!isJsonContentType(headers.get('content-type'))) return null;
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') return null;
  for (const key in body) if (!ENVELOPE.has(key)) return null;
  const { id, method, params } = body;
  // params: absent or a plain object; `task` (task-augmented calls) and `__proto__` (which the SDK's
  // schemas drop) take the SDK path.
  if (params !== undefined && (!isPlainObject(params) || 'task' in params || Object.hasOwn(params, '__proto__'))) return null;
  // Initialize skips the Mcp-Protocol-Version header check in the SDK; every other message gets it.
  const versionOk = () => {
    const header = headers.get('mcp-protocol-version');
    return header === null || SUPPORTED_PROTOCOL_VERSIONS.includes(header);
  };
  if (!('id' in body)) {
    // A notification: the stateless SDK server acts on none of them and answers 202.
    if (!method.startsWith('notifications/') || (params && '_meta' in params) || !versionOk()) return null;
    return { kind: 'notification' };
  }
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return null;
  const rid = id as string | number;
  if (method === 'initialize') return { kind: 'initialize', id: rid, protocolVersion: (params as { protocolVersion: string }).protocolVersion };
  if (!versionOk()) return null;
  if (method === 'tools/list') return { kind: 'tools/list', id: rid };
  if (method === 'tools/call') {
    const call = params as { name: string; arguments?: Record<string, unknown> };
    if (call.arguments !== undefined && (!isPlainObject(call.arguments) || Object.hasOwn(call.arguments, '__proto__'))) return null;
    return { kind: 'tools/call', id: rid, params: call };
  }
  return null;
}

/**
 * The tools/call result as the SDK sends it: it validates the handler's result with CallToolResultSchema
 * and sends the parsed copy. A plain-object structuredContent and text content parse to themselves (same
 * keys, same order); anything else goes through the schema (loaded then), as in the SDK.
 */
function toolResult(result: Record<string, unknown>): unknown {
  const { content, structuredContent } = result;
  const simple =
    Array.isArray(content) &&
    content.every((c) => isPlainObject(c) && c.type === 'text' && typeof c.text === 'string' && Object.keys(c).length === 2) &&
    isPlainObject(structuredContent) &&
    !Object.hasOwn(structuredContent, '__proto__') &&
    Object.keys(result).every((k) => k === 'content' || k === 'structuredContent' || (k === 'isError' && typeof result.isError === 'boolean'));
  return simple ? result : parsedResult(result);
}

async function parsedResult(result: Record<string, unknown>): Promise<unknown> {
  const { CallToolResultSchema, McpError } = await sdkTypes();
  const parsed = CallToolResultSchema.safeParse(result);
  if (!parsed.success) {
    const error = parsed.error as unknown;
    throw new McpError(INVALID_PARAMS, `Invalid tools/call result: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parsed.data;
}

async function resultOf(handlers: FastHandlers, p: Exclude<FastPlan, { kind: 'notification' }>): Promise<unknown> {
  if (p.kind === 'initialize') {
    const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(p.protocolVersion) ? p.protocolVersion : LATEST_PROTOCOL_VERSION;
    return { protocolVersion, capabilities: handlers.capabilities, serverInfo: handlers.serverInfo };
  }
  if (p.kind === 'tools/list') return handlers.listTools();
  return toolResult(await handlers.callTool(p.params));
}

/** Tool results whose structuredContent serializes to exactly their one text content (see mirroredResult). */
const mirrored = new WeakSet<object>();

/**
 * `{content: [{type: 'text', text}], structuredContent, isError?}` where `text` is
 * `JSON.stringify(structuredContent)`: the answer reuses `text` instead of serializing the payload twice.
 */
export function mirroredResult(structuredContent: unknown, isError: boolean): Record<string, unknown> {
  const result = { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, ...(isError ? { isError: true } : {}) };
  mirrored.add(result);
  return result;
}

/** JSON.stringify({result, jsonrpc, id}) for a mirrored result, with the payload serialized once. */
function mirroredMessage(result: Record<string, unknown>, id: unknown): string {
  const text = (result.content as [{ text: string }])[0].text;
  return `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}${result.isError ? ',"isError":true' : ''}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** The JSON-RPC response message, members in the SDK's order (protocol.js `_onrequest`). */
async function messageOf(handlers: FastHandlers, p: Exclude<FastPlan, { kind: 'notification' }>): Promise<string> {
  try {
    const result = await resultOf(handlers, p);
    if (mirrored.has(result as object)) return mirroredMessage(result as Record<string, unknown>, p.id);
    return JSON.stringify({ result, jsonrpc: '2.0', id: p.id });
  } catch (e) {
    const error = e as { code?: unknown; message?: string; data?: unknown };
    return JSON.stringify({
      jsonrpc: '2.0',
      id: p.id,
      error: {
        code: Number.isSafeInteger(error.code) ? error.code : INTERNAL_ERROR,
        message: error.message ?? 'Internal error',
        ...(error.data !== undefined && { data: error.data }),
      },
    });
  }
}

const SSE_HEADERS = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' };
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const frame = (message: string) => `event: message\ndata: ${message}\n\n`;
const KEEPALIVE = ': keepalive\n\n';

/**
 * Answer a planned message as the SDK transport would: 202 without a body for a notification; the one
 * response as JSON, or as one SSE `message` event. The SDK streams and writes a keep-alive comment every
 * 15 s while the handler runs; a quick answer is sent whole, a slow one switches to that stream.
 */
export async function answer(handlers: FastHandlers, p: FastPlan, sse: boolean, keepAliveMs = DEFAULT_SSE_KEEP_ALIVE_MS): Promise<Response> {
  if (p.kind === 'notification') return new Response(null, { status: 202 });
  const message = messageOf(handlers, p);
  if (!sse) return new Response(await message, { status: 200, headers: JSON_HEADERS });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const slow = new Promise<null>((resolve) => {
    timer = setTimeout(resolve, keepAliveMs, null);
  });
  const quick = await Promise.race([message, slow]);
  clearTimeout(timer);
  if (quick !== null) return new Response(frame(quick), { status: 200, headers: SSE_HEADERS });
  const encoder = new TextEncoder();
  let interval: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // Writes after the client went away fail; the SDK ignores them too.
      const write = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          clearInterval(interval);
        }
      };
      write(KEEPALIVE);
      interval = setInterval(write, keepAliveMs, KEEPALIVE);
      void message.then((text) => {
        clearInterval(interval);
        write(frame(text));
        try {
          controller.close();
        } catch {}
      });
    },
    cancel() {
      clearInterval(interval);
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}
