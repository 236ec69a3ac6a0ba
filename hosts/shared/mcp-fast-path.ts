import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import { prebuiltJson } from '../../lib/prebuilt-json.ts';
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
  // A mirrored result has the simple shape by construction.
  if (mirrored.has(result)) return result;
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

/** The result of a planned request; a value, or a promise for tools/call (no async hop for what is ready). */
function resultOf(handlers: FastHandlers, p: Exclude<FastPlan, { kind: 'notification' }>): unknown {
  if (p.kind === 'initialize') {
    const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(p.protocolVersion) ? p.protocolVersion : LATEST_PROTOCOL_VERSION;
    return { protocolVersion, capabilities: handlers.capabilities, serverInfo: handlers.serverInfo };
  }
  if (p.kind === 'tools/list') return handlers.listTools();
  return handlers.callTool(p.params).then(toolResult);
}

/**
 * Tool results whose structuredContent serializes to exactly their one text content (see mirroredResult),
 * with that text's escaped form when it was built ahead (lib/prebuilt-json.ts).
 */
const mirrored = new WeakMap<object, string | undefined>();

/**
 * `{content: [{type: 'text', text}], structuredContent, isError?}` where `text` is
 * `JSON.stringify(structuredContent)`: the answer reuses `text` instead of serializing the payload twice.
 */
export function mirroredResult(structuredContent: unknown, isError: boolean): Record<string, unknown> {
  const prebuilt = prebuiltJson(structuredContent);
  const result: Record<string, unknown> = { content: [{ type: 'text', text: prebuilt?.json ?? JSON.stringify(structuredContent) }], structuredContent };
  if (isError) result.isError = true;
  mirrored.set(result, prebuilt?.quoted);
  return result;
}

/** JSON.stringify({result, jsonrpc, id}) for a mirrored result, with the payload serialized once. */
function mirroredMessage(result: Record<string, unknown>, id: unknown): string {
  const text = (result.content as [{ text: string }])[0].text;
  const quoted = mirrored.get(result);
  return `{"result":{"content":[{"type":"text","text":${quoted === undefined ? JSON.stringify(text) : `"${quoted}"`}}],"structuredContent":${text}${result.isError ? ',"isError":true' : ''}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** The JSON-RPC response message of a result, members in the SDK's order (protocol.js `_onrequest`). */
function resultMessage(result: unknown, id: string | number): string {
  try {
    if (mirrored.has(result as object)) return mirroredMessage(result as Record<string, unknown>, id);
    return JSON.stringify({ result, jsonrpc: '2.0', id });
  } catch (e) {
    return errorMessage(e, id);
  }
}

/** The JSON-RPC error message of a handler's failure. */
function errorMessage(e: unknown, id: string | number): string {
  const error = e as { code?: unknown; message?: string; data?: unknown };
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: Number.isSafeInteger(error.code) ? error.code : INTERNAL_ERROR,
      message: error.message ?? 'Internal error',
      ...(error.data !== undefined && { data: error.data }),
    },
  });
}

/** The JSON-RPC response message: a string when the result is ready, else a promise for it (never rejected). */
function messageOf(handlers: FastHandlers, p: Exclude<FastPlan, { kind: 'notification' }>): string | Promise<string> {
  let result: unknown;
  try {
    result = resultOf(handlers, p);
  } catch (e) {
    return errorMessage(e, p.id);
  }
  if (!(result instanceof Promise)) return resultMessage(result, p.id);
  return result.then(
    (r) => resultMessage(r, p.id),
    (e) => errorMessage(e, p.id),
  );
}

// Headers built once: a Response copies a Headers instance faster than it converts an object (same bytes on the wire).
const SSE_HEADERS = new Headers({
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
});
const JSON_HEADERS = new Headers({ 'Content-Type': 'application/json' });
const frame = (message: string) => `event: message\ndata: ${message}\n\n`;
const KEEPALIVE = ': keepalive\n\n';

/**
 * Answer a planned message as the SDK transport would: 202 without a body for a notification; the one
 * response as JSON, or as one SSE `message` event. The SDK streams and writes a keep-alive comment every
 * 15 s while the handler runs; a quick answer is sent whole, a slow one switches to that stream.
 */
export function answer(handlers: FastHandlers, p: FastPlan, sse: boolean, keepAliveMs = DEFAULT_SSE_KEEP_ALIVE_MS): Response | Promise<Response> {
  if (p.kind === 'notification') return new Response(null, { status: 202 });
  const message = messageOf(handlers, p);
  // A result that is ready (initialize, tools/list) is answered at once, without a timer.
  if (typeof message === 'string') return sse ? new Response(frame(message), { status: 200, headers: SSE_HEADERS }) : json(message);
  const asked = turn();
  if (!sse) return message.then((text) => later(text, JSON_HEADERS, asked));
  return new Promise<Response>((resolve) => {
    const timer = setTimeout(() => resolve(streamed(message, keepAliveMs)), keepAliveMs);
    void message.then((text) => {
      clearTimeout(timer);
      resolve(later(frame(text), SSE_HEADERS, asked));
    });
  });
}

const json = (message: string) => new Response(message, { status: 200, headers: JSON_HEADERS });

/**
 * Bun writes an answer that comes after the request's I/O turn (the handler awaited I/O) in one send
 * only when its body is under 15 KiB (16384 - 1024 bytes: it corks the socket for those alone); a
 * larger one goes out uncorked, one send per piece of the status line and of every header (27 sends
 * for an SSE answer, ~150 us of CPU here and as many wake-ups of the client). A stream of one chunk
 * (framed chunked, as the SDK frames its SSE answers) goes out in two. An answer of the request's own
 * turn (nothing but microtasks awaited: PGlite, memory) is written corked whole: it stays a body.
 */
const CORKED_BYTES = 16384 - 1024;
const encoder = new TextEncoder();
let turns = 0;
let counting = false;
/** The event-loop turn: changes once the turn a request arrived in has ended (one setImmediate per busy turn). */
function turn(): number {
  if (!counting) {
    counting = true;
    setImmediate(() => {
      turns++;
      counting = false;
    });
  }
  return turns;
}
function later(body: string, headers: Headers, asked: number): Response {
  if (body.length * 3 < CORKED_BYTES || turns === asked) return new Response(body, { status: 200, headers });
  const bytes = encoder.encode(body);
  if (bytes.byteLength < CORKED_BYTES) return new Response(bytes, { status: 200, headers });
  return new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }),
    { status: 200, headers },
  );
}

/** A slow answer: a keep-alive comment at once and every `keepAliveMs`, then the message. */
function streamed(message: Promise<string>, keepAliveMs: number): Response {
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
