import { CallToolRequestSchema, GetTaskRequestSchema, InitializeRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError } from '../../core/errors.ts';
import { parseJsonBytes, readJsonBytes } from '../rest/request.ts';

/** Schemas of the requests this host answers; the SDK would report their failures as -32603 with a validator dump. */
const PARAMS = new Map<string, { safeParse(x: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }>([
  ['initialize', InitializeRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['tasks/get', GetTaskRequestSchema],
]);

const isObject = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);

/** A tools/call whose params CallToolRequestSchema accepts as they are (the common case: no zod run per call). */
function plainToolCall(message: { method?: unknown; params?: unknown }): boolean {
  const p = message.params;
  if (message.method !== 'tools/call' || !isObject(p) || typeof p.name !== 'string') return false;
  if (p.arguments !== undefined && !isObject(p.arguments)) return false;
  return !('_meta' in p) && !('task' in p);
}

const rpcError = (status: number, id: unknown, code: number, message: string) =>
  Response.json({ jsonrpc: '2.0', id: id ?? null, error: { code, message } }, { status });

/**
 * Read an MCP POST body at the edge (byte cap, nesting cap; see readJsonBytes/parseJsonBytes) and
 * check the params of the requests we answer, so a bad call gets -32602 naming the member. Returns
 * the raw bytes (signature verification) and the parsed body for the SDK transport, or the error response.
 */
export async function readMcpBody(request: Request, maxBytes: number): Promise<{ bytes: Uint8Array; body: unknown } | Response> {
  let body: unknown;
  let bytes: Uint8Array;
  try {
    bytes = await readJsonBytes(request, maxBytes, '');
    body = parseJsonBytes(bytes, '');
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    if (/malformed JSON/.test(error.message)) return rpcError(400, null, -32700, 'Parse error: Invalid JSON');
    return rpcError(error.status, null, error.code === 'INVALID_REQUEST' ? -32600 : -32000, error.message);
  }
  if (body === undefined) return rpcError(400, null, -32700, 'Parse error: empty body');
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const message = body as { id?: unknown; method?: unknown };
    const schema = typeof message.method === 'string' && message.id !== undefined && !plainToolCall(message) ? PARAMS.get(message.method) : undefined;
    const checked = schema?.safeParse(body);
    if (checked && !checked.success) {
      const issue = checked.error?.issues[0];
      const where = issue?.path.length ? issue.path.map(String).join('.') : 'params';
      return rpcError(200, message.id, -32602, `Invalid params: ${where}: ${issue?.message ?? 'invalid'}`);
    }
  }
  return { bytes, body };
}
