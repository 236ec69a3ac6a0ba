import * as v from 'valibot';
import { definePlugin, optional } from '../../core/plugin.ts';
import { Endpoints, JsonText, Reply, type EndpointDefinition } from '../../core/endpoint.ts';
import { Http } from '../../core/http.ts';
import { Auth, authenticateRequest, type Principal } from '../../core/ports/auth.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { TokenVerifier } from '../../core/ports/token-verifier.ts';
import { ProtocolError } from '../../core/errors.ts';
import { callEndpoint, type EndpointCollaborators } from '../shared/endpoint-call.ts';
import { entriesOf, isOptional, jsonSchemaOf, type JsonSchema } from '../shared/json-schema.ts';
import { trustedBaseUrl } from '../../lib/urls.ts';
import { readMcpBody } from '../shared/mcp-edge.ts';
import { answer, plan, type FastHandlers } from '../shared/mcp-fast-path.ts';
import { sdkServerSide } from '../shared/mcp-sdk-server.ts';

const CAPABILITIES = { tools: { listChanged: false } };

const options = v.object({
  /** Where the Streamable HTTP endpoint is served. */
  path: v.optional(v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9/_-]*$/, 'must be an absolute path')), '/mcp'),
  name: v.optional(v.string(), 'registry'),
  /** Answer every message with a per-request SDK server, never with the fast path (same bytes). For the test that compares the two. */
  sdk: v.optional(v.boolean(), false),
});

interface Tool {
  name: string;
  endpoint: EndpointDefinition;
  description: string;
  inputSchema: JsonSchema;
  /** Which argument goes where. */
  params: Set<string>;
  query: Set<string>;
  hasBody: boolean;
}

/** One tool per endpoint that names one: its arguments are the endpoint's path, query and body fields. */
function toolFor(e: EndpointDefinition & { tool: string }): Tool {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const params = new Set<string>();
  const query = new Set<string>();
  const add = (name: string, schema: JsonSchema, isRequired: boolean, where: Set<string> | null) => {
    if (properties[name]) throw new Error(`tool ${e.tool}: argument ${name} is both a ${where ? 'parameter' : 'body field'} and another field`);
    properties[name] = schema;
    if (isRequired) required.push(name);
    where?.add(name);
  };
  for (const [name, schema] of Object.entries(entriesOf(e.params) ?? {})) add(name, jsonSchemaOf(schema), true, params);
  for (const [name, schema] of Object.entries(entriesOf(e.query) ?? {})) add(name, jsonSchemaOf(schema), !isOptional(schema), query);
  const hasBody = !!e.body && e.method !== 'GET' && e.method !== 'DELETE';
  if (hasBody) {
    const body = jsonSchemaOf(e.body);
    const bodyRequired = new Set((body.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((body.properties as Record<string, JsonSchema> | undefined) ?? {}))
      add(name, schema, bodyRequired.has(name), null);
  }
  return {
    name: e.tool,
    endpoint: e,
    description: [
      e.summary,
      e.description,
      e.auth === 'required' ? `Needs a credential${e.tier && e.tier !== 'public' ? ` with ${e.tier} standing` : ''}.` : '',
    ]
      .filter(Boolean)
      .join(' '),
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    params,
    query,
    hasBody,
  };
}

/** Query values travel as strings: numbers and booleans become their text, lists stay lists. */
const queryValue = (x: unknown) => (typeof x === 'number' || typeof x === 'boolean' ? String(x) : x);

/** What a handler returned, as the tool's JSON result (and whether it is an error). */
async function resultOf(result: unknown): Promise<{ body: unknown; isError: boolean }> {
  if (result instanceof Reply) return { body: result.body, isError: result.status >= 400 };
  if (result instanceof JsonText) return { body: JSON.parse(result.text), isError: false };
  if (result instanceof Response) {
    const text = await result.text();
    try {
      return { body: JSON.parse(text), isError: result.status >= 400 };
    } catch {
      return { body: { text }, isError: result.status >= 400 };
    }
  }
  return { body: result ?? {}, isError: false };
}

const errorBody = (error: ProtocolError) => ({ error: error.code.toLowerCase(), ...error.toTaskError() });

/**
 * The registry's agent-tool endpoint: MCP (Streamable HTTP, stateless, JSON answers) whose tools are
 * the endpoint definitions that name a `tool`, executed through the same path as their REST routes
 * (auth, validation, rate limits, handler): no second implementation. Results arrive in
 * `structuredContent` and as JSON text; failures set `isError` with `{error, code, message}`.
 * `initialize`, `tools/list` and public tools need no credential; a tool needing one, called without
 * it, or any request with an invalid one, is HTTP 401 with `WWW-Authenticate: Bearer resource_metadata=...`
 * (the MCP authorization spec), so OAuth clients start their sign-in from it.
 */
export default definePlugin({
  name: 'host-mcp-endpoints',
  deps: { endpoints: Endpoints, http: Http, auth: optional(Auth), limiter: optional(RateLimiter), verifier: optional(TokenVerifier) },
  options,
  init({ endpoints, http, auth, limiter, verifier }, kernel) {
    const { maxBodyBytes } = kernel.config.server;
    const path = kernel.options.path;
    const collaborators: EndpointCollaborators = { auth, limiter, logger: kernel.logger, resource: path };
    let tools: Map<string, Tool> | null = null;
    let listed: unknown[] = [];

    const challenge = (request: Request, sent: boolean) => {
      const metadata = verifier ? ` resource_metadata="${verifier.resourceMetadataUrl(trustedBaseUrl(kernel.config.server, request) ?? '', path)}"` : '';
      return `Bearer${metadata}${sent ? `${metadata ? ',' : ''} error="invalid_token"` : ''}`;
    };
    const rpcError = (status: number, code: number, message: string, id: unknown = null, headers: Record<string, string> = {}) =>
      Response.json({ jsonrpc: '2.0', id, error: { code, message } }, { status, headers });

    /** What one request's server answers; the fast path (hosts/shared/mcp-fast-path.ts) and the SDK server share it. */
    const handlersFor = (request: Request, principal: Principal | null, requestId: string, ip: () => string): FastHandlers => ({
      serverInfo: { name: kernel.options.name, version: '1.0.0' },
      capabilities: CAPABILITIES,
      listTools: () => ({ tools: listed }),
      async callTool(rpc) {
        const tool = tools!.get(rpc.name);
        const reply = (body: unknown, isError: boolean) => {
          const structured = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : { result: body };
          return {
            content: [{ type: 'text' as const, text: JSON.stringify(structured) }],
            structuredContent: structured,
            ...(isError ? { isError: true } : {}),
          };
        };
        if (!tool) return reply(errorBody(new ProtocolError('INVALID_REQUEST', `Unknown tool ${rpc.name}`)), true);
        const args = (rpc.arguments ?? {}) as Record<string, unknown>;
        const query: Record<string, unknown> = {};
        const params: Record<string, string> = {};
        const body: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(args)) {
          if (tool.params.has(k)) params[k] = String(x);
          else if (tool.query.has(k)) query[k] = queryValue(x);
          else body[k] = x;
        }
        try {
          const result = await callEndpoint(
            tool.endpoint,
            {
              query,
              params,
              body: async () => (tool.hasBody ? body : undefined),
              authorization: request.headers.get('authorization'),
              ip,
              requestId,
              headers: request.headers,
              admitted: { principal },
            },
            collaborators,
          );
          const { body: out, isError } = await resultOf(result);
          return reply(out, isError);
        } catch (error) {
          if (error instanceof ProtocolError) return reply(errorBody(error), true);
          throw error;
        }
      },
    });

    http.add(
      {
        method: 'POST',
        path,
        async handle(request, ctx) {
          // The edge rules of the agent MCP host: byte and nesting caps, params checked (-32602).
          const read = await readMcpBody(request, maxBodyBytes);
          if (read instanceof Response) return read;
          const parsed = read.body;
          const messages = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ id?: unknown; method?: unknown; params?: { name?: unknown } }>;
          const firstId = messages.find((m) => m && typeof m === 'object' && 'id' in m)?.id ?? null;
          const needsCredential = messages.some((m) => m?.method === 'tools/call' && tools!.get(String(m.params?.name ?? ''))?.endpoint.auth === 'required');
          const authorization = request.headers.get('authorization');
          let principal: Principal | null = null;
          try {
            principal = await authenticateRequest(auth, authorization, needsCredential ? 'required' : 'optional', undefined, path);
          } catch (error) {
            if (!(error instanceof ProtocolError)) throw error;
            return rpcError(401, -32001, error.message, firstId, { 'www-authenticate': challenge(request, !!authorization) });
          }
          const handlers = handlersFor(request, principal, ctx.requestId, () => ctx.ip);
          const fast = kernel.options.sdk ? null : plan(request.headers, parsed);
          if (fast) return answer(handlers, fast, false);
          const sdk = await sdkServerSide();
          return sdk.handle(sdk.server(handlers), request, { json: true, maxBodyBytes, parsedBody: parsed });
        },
      },
      {
        method: 'GET',
        path,
        // Stateless: no server-initiated stream to resume.
        handle: () => rpcError(405, -32000, 'Method not allowed: POST JSON-RPC messages', null, { allow: 'POST' }),
      },
      {
        method: 'DELETE',
        path,
        handle: () => rpcError(405, -32000, 'Method not allowed: this endpoint keeps no sessions', null, { allow: 'POST' }),
      },
    );

    return {
      // Endpoints are read at start: every feature plugin has contributed its own by then.
      start() {
        tools = new Map();
        for (const e of endpoints.list()) {
          if (!e.tool) continue;
          if (tools.has(e.tool)) throw new Error(`MCP tool ${e.tool} is named by two endpoints`);
          tools.set(e.tool, toolFor(e as EndpointDefinition & { tool: string }));
        }
        listed = [...tools.values()].map((t) => ({
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema,
          annotations: { readOnlyHint: t.endpoint.method === 'GET', openWorldHint: false },
        }));
      },
    };
  },
});
