import { ProtocolError } from '../../core/errors.ts';
import { parseJsonBytes, readJsonBytes } from '../rest/request.ts';
import { sdkTypes } from './mcp-protocol.ts';

type ParamsSchema = { safeParse(x: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } };

const CHECKED = new Set(['initialize', 'tools/list', 'tools/call', 'tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']);

/** Schemas of the requests this host answers; the SDK would report their failures as -32603 with a validator dump. */
async function schemaOf(method: string): Promise<ParamsSchema | undefined> {
  // Other methods never load the schemas (see sdkTypes).
  if (!CHECKED.has(method)) return undefined;
  const types = await sdkTypes();
  const schemas: Record<string, ParamsSchema> = {
    initialize: types.InitializeRequestSchema,
    'tools/list': types.ListToolsRequestSchema,
    'tools/call': types.CallToolRequestSchema,
    'tasks/get': types.GetTaskRequestSchema,
    'tasks/result': types.GetTaskPayloadRequestSchema,
    'tasks/list': types.ListTasksRequestSchema,
    'tasks/cancel': types.CancelTaskRequestSchema,
  };
  return schemas[method];
}

const isObject = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);

/** Own keys of `x`, all among `allowed`, each passing `ok`. */
const only = (x: Record<string, unknown>, allowed: readonly string[], ok: (value: unknown, key: string) => boolean) =>
  Object.keys(x).every((k) => allowed.includes(k) && ok(x[k], k));

const CAPABILITIES = ['experimental', 'sampling', 'elicitation', 'roots', 'tasks', 'extensions'];

/**
 * Params the SDK's schema for the method accepts as they are: the shapes nearly every request has,
 * checked without loading the schemas. Anything else (a malformed or unusual message) is checked by
 * the schema itself. test/hosts/mcp-protocol.test.ts holds each shape accepted here to the schema's verdict.
 */
export function plainParams(message: { method?: unknown; params?: unknown }): boolean {
  const p = message.params;
  switch (message.method) {
    case 'tools/call':
      if (!isObject(p) || typeof p.name !== 'string') return false;
      if (p.arguments !== undefined && !isObject(p.arguments)) return false;
      return !('_meta' in p) && !('task' in p);
    case 'tools/list':
      return p === undefined || (isObject(p) && only(p, ['cursor'], (v) => typeof v === 'string'));
    case 'initialize':
      return (
        isObject(p) &&
        only(p, ['protocolVersion', 'capabilities', 'clientInfo'], () => true) &&
        typeof p.protocolVersion === 'string' &&
        // Client information: names and version only.
        isObject(p.clientInfo) &&
        typeof p.clientInfo.name === 'string' &&
        typeof p.clientInfo.version === 'string' &&
        only(p.clientInfo, ['name', 'version', 'title'], (v) => typeof v === 'string') &&
        // Capabilities: each declared empty, or roots with its listChanged flag.
        isObject(p.capabilities) &&
        only(
          p.capabilities,
          CAPABILITIES,
          (c, k) => isObject(c) && (k === 'roots' ? only(c, ['listChanged'], (v) => typeof v === 'boolean') : Object.keys(c).length === 0),
        )
      );
    default:
      return false;
  }
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
    const schema = typeof message.method === 'string' && message.id !== undefined && !plainParams(message) ? await schemaOf(message.method) : undefined;
    const checked = schema?.safeParse(body);
    if (checked && !checked.success) {
      const issue = checked.error?.issues[0];
      const where = issue?.path.length ? issue.path.map(String).join('.') : 'params';
      return rpcError(200, message.id, -32602, `Invalid params: ${where}: ${issue?.message ?? 'invalid'}`);
    }
  }
  return { bytes, body };
}
