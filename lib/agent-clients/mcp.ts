import type { CrawlerPort, OutboundResponse } from '../../core/ports/crawler.ts';
import type { SignRequestFn } from '../rfc9421/sign.ts';

/**
 * A minimal MCP client over Streamable HTTP, on the crawler port (so every probe goes through the
 * SSRF guard and its limits). Stateless use: initialize, then one request, carrying the session id
 * the server may hand out. Answers may be JSON or an SSE stream; both are read.
 */
export class McpProbeError extends Error {
  override name = 'McpProbeError';
}

/** A tool call the agent answered with `isError`: `body` is its parsed error payload (`{code, message}`), when JSON. */
export class McpToolError extends McpProbeError {
  override name = 'McpToolError';
  constructor(
    message: string,
    readonly body: Record<string, unknown> | null,
  ) {
    super(message);
  }
}

const PROTOCOL_VERSION = '2025-06-18';

export interface McpLimits {
  timeoutMs: number;
  maxBytes: number;
  /** Sign every request (RFC 9421 request-signing profile) for agents that verify or require it. */
  sign?: SignRequestFn;
  /** Sent with every request (e.g. `authorization: Bearer ...` for an agent that requires a credential). */
  headers?: Record<string, string>;
}

function parseJsonRpc(response: OutboundResponse, id: number): any {
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  const text = response.text();
  let messages: any[] = [];
  if (type.startsWith('text/event-stream')) {
    for (const block of text.split(/\r?\n\r?\n/)) {
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      try {
        messages.push(JSON.parse(data));
      } catch {
        /* not JSON: ignore the event */
      }
    }
  } else {
    try {
      const parsed = JSON.parse(text);
      messages = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      throw new McpProbeError(`not a JSON-RPC answer (HTTP ${response.status}, ${type || 'no content type'})`);
    }
  }
  const reply = messages.find((m) => m && m.id === id);
  if (!reply) throw new McpProbeError(`no JSON-RPC reply (HTTP ${response.status})`);
  if (reply.error) throw new McpProbeError(`JSON-RPC error ${reply.error.code}: ${String(reply.error.message).slice(0, 200)}`);
  return reply.result;
}

export class McpProbe {
  private session: string | null = null;
  private nextId = 1;
  serverInfo: { name?: string; version?: string } | null = null;
  capabilities: Record<string, unknown> | null = null;

  constructor(
    private readonly crawler: CrawlerPort,
    private readonly url: string,
    private readonly limits: McpLimits,
  ) {}

  private async post(body: Record<string, unknown>): Promise<OutboundResponse> {
    const headers: Record<string, string> = {
      ...this.limits.headers,
      'content-type': 'application/json',
      // Streamable HTTP servers answer 406 without both types.
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
    };
    if (this.session) headers['mcp-session-id'] = this.session;
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    if (this.limits.sign) Object.assign(headers, await this.limits.sign({ method: 'POST', url: this.url, body: bytes }));
    return this.crawler.fetch(this.url, {
      method: 'POST',
      headers,
      body: bytes,
      timeoutMs: this.limits.timeoutMs,
      maxBytes: this.limits.maxBytes,
      redirectPolicy: 'any-public',
      maxRedirects: 3,
    });
  }

  async request(method: string, params: Record<string, unknown> = {}): Promise<any> {
    const id = this.nextId++;
    const response = await this.post({ jsonrpc: '2.0', id, method, params });
    if (response.status >= 400 && !(response.headers.get('content-type') ?? '').includes('json')) {
      throw new McpProbeError(`HTTP ${response.status}`);
    }
    return parseJsonRpc(response, id);
  }

  async initialize(): Promise<void> {
    const id = this.nextId++;
    const response = await this.post({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'registry-probe', version: '1.0.0' } },
    });
    if (response.status >= 400) throw new McpProbeError(`initialize answered HTTP ${response.status}`);
    const result = parseJsonRpc(response, id);
    if (!result || typeof result.protocolVersion !== 'string') throw new McpProbeError('initialize result lacks protocolVersion');
    this.session = response.headers.get('mcp-session-id');
    this.serverInfo = result.serverInfo ?? null;
    this.capabilities = result.capabilities ?? null;
    // Notifications have no reply; the answer (202) is not inspected.
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  async listTools(): Promise<Array<{ name: string; description?: string }>> {
    const result = await this.request('tools/list');
    return Array.isArray(result?.tools)
      ? result.tools.map((t: any) => ({ name: String(t.name), ...(t.description ? { description: String(t.description) } : {}) }))
      : [];
  }

  /** Call a tool and return its structured result (structuredContent, or the JSON text of the first content item). */
  async callTool(name: string, args: Record<string, unknown>): Promise<unknown> {
    const result = await this.request('tools/call', { name, arguments: args });
    if (result?.isError) {
      const text = result.content?.[0]?.text;
      let body: Record<string, unknown> | null = null;
      try {
        const parsed = result.structuredContent ?? (typeof text === 'string' ? JSON.parse(text) : null);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed;
      } catch {
        /* not JSON: no body */
      }
      throw new McpToolError(`tool ${name} failed: ${typeof text === 'string' ? text.slice(0, 300) : 'error'}`, body);
    }
    if (result?.structuredContent) return result.structuredContent;
    const text = result?.content?.find((c: any) => c?.type === 'text')?.text;
    if (typeof text !== 'string') throw new McpProbeError(`tool ${name} returned no content`);
    try {
      return JSON.parse(text);
    } catch {
      throw new McpProbeError(`tool ${name} returned non-JSON text`);
    }
  }
}
