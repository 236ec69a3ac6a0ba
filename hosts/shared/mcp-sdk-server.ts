import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { FastHandlers } from './mcp-fast-path.ts';

/**
 * The MCP SDK's server side (Server, transport, Ajv), loaded on the first request the fast path
 * leaves to it (batches, tasks/get, ping, odd shapes). A deployment whose clients send only the
 * common requests never loads it: about 10 MB of resident memory per process.
 */
export interface SdkServerSide {
  /** A stateless Server for one request, answering tools/list and tools/call with `handlers`. */
  server(handlers: FastHandlers): Server;
  /** Connect `server` to a fresh stateless transport and let it answer `request`. */
  handle(server: Server, request: Request, options: { json: boolean; maxBodyBytes: number; parsedBody: unknown }): Promise<Response>;
}

let loading: Promise<SdkServerSide> | null = null;

export function sdkServerSide(): Promise<SdkServerSide> {
  loading ??= (async () => {
    const [{ Server }, { WebStandardStreamableHTTPServerTransport }, { AjvJsonSchemaValidator }, { CallToolRequestSchema, ListToolsRequestSchema }] =
      await Promise.all([
        import('@modelcontextprotocol/sdk/server/index.js'),
        import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
        import('@modelcontextprotocol/sdk/validation/ajv'),
        import('@modelcontextprotocol/sdk/types.js'),
      ]);
    // One validator for every server (the SDK's default builds a fresh Ajv per server, the costliest part of a request).
    const validator = new AjvJsonSchemaValidator();
    return {
      server(handlers) {
        const server = new Server(handlers.serverInfo, { capabilities: handlers.capabilities, jsonSchemaValidator: validator });
        server.setRequestHandler(ListToolsRequestSchema, () => handlers.listTools() as any);
        server.setRequestHandler(CallToolRequestSchema, (rpc) => handlers.callTool(rpc.params) as any);
        return server;
      },
      async handle(server, request, { json, maxBodyBytes, parsedBody }) {
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: json,
          maxRequestBodySize: maxBodyBytes,
        });
        await server.connect(transport);
        // The body is handed over parsed; the SDK's own Accept check is satisfied once negotiation is done by the host.
        const headers = new Headers(request.headers);
        headers.set('accept', 'application/json, text/event-stream');
        return transport.handleRequest(new Request(request.url, { method: 'POST', headers }), { parsedBody });
      },
    };
  })();
  return loading;
}
