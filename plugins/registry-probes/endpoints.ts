import * as v from 'valibot';
import { defineEndpoint } from '../../core/endpoint.ts';
import { ProtocolError, invalid } from '../../core/errors.ts';
import { CrawlerError, type CrawlerPort } from '../../core/ports/crawler.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import { tryNormalizeDomain } from '../../lib/domain.ts';
import { fetchAdagents, TransientCrawlError, type FetchedDocument } from '../../lib/registry-documents/fetch.ts';
import type { SchemaValidator as DocumentValidator } from '../../lib/registry-documents/schema-validation.ts';
import { McpProbe, McpProbeError } from '../../lib/agent-clients/mcp.ts';
import { A2aProbeError, fetchAgentCard } from '../../lib/agent-clients/a2a.ts';
import { AgentUnreachableError, connectAgent } from '../../lib/agent-clients/session.ts';
import type { SignRequestFn } from '../../lib/rfc9421/sign.ts';
import type { ProbeGuard } from './guard.ts';
import * as r from '../../lib/response-schemas.ts';

export interface ProbeDeps {
  /** The crawler behind the guard's port rule. */
  crawler: CrawlerPort;
  validator: DocumentValidator;
  clock: ClockPort;
  guard: ProbeGuard;
  timeoutMs: number;
  maxBytes: number;
  origin: string;
  /** Signs calls to agents (RFC 9421 request signing), when configured. */
  sign?: SignRequestFn;
}

const agentUrl = v.pipe(
  v.string('is required'),
  v.maxLength(2000, 'is too long'),
  v.check((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an absolute https URL'),
);

const protocolParam = v.optional(v.picklist(['auto', 'mcp', 'a2a'], 'must be auto, mcp or a2a'), 'auto');

/**
 * A failure in words a public caller may see. Network-level failures are one reason ("could not
 * connect"): telling refused, reset and TLS-mismatched ports apart would make the probe a port
 * scanner. Application-level answers (HTTP status, not JSON-RPC) are the agent's, and kept.
 */
function describe(error: unknown): string {
  if (error instanceof CrawlerError) {
    switch (error.code) {
      case 'timeout':
        return 'no answer in time';
      case 'ssrf_blocked':
      case 'invalid_url':
        return `refused: ${error.message}`;
      case 'too_large':
        return 'the answer was too large';
      case 'too_many_redirects':
      case 'redirect_refused':
        return 'redirected somewhere not followed';
      case 'bad_content_type':
        return 'answered with an unexpected content type';
      default:
        return 'could not connect';
    }
  }
  if (error instanceof TransientCrawlError) return error.timeout ? 'no answer in time' : 'could not connect';
  if (error instanceof McpProbeError || error instanceof A2aProbeError) return error.message;
  return 'failed';
}

/** Map an outbound failure: our refusal of the URL -> 400, no answer in time -> 504, anything else -> 502. */
function upstreamError(error: unknown, what: string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof CrawlerError) {
    if (error.code === 'ssrf_blocked' || error.code === 'invalid_url') return invalid(`url: ${error.message}`, 'url');
    if (error.code === 'timeout') return new ProtocolError('UPSTREAM_TIMEOUT', `${what}: ${describe(error)}`);
    return new ProtocolError('UPSTREAM_FAILED', `${what}: ${describe(error)}`);
  }
  if (error instanceof TransientCrawlError) return new ProtocolError(error.timeout ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_FAILED', `${what}: ${describe(error)}`);
  if (error instanceof AgentUnreachableError) {
    const details = Object.fromEntries(Object.entries(error.reasons).map(([k, r]) => [k, describe(r)]));
    return new ProtocolError(error.timedOut ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_FAILED', `${what}: ${error.message}`, { details });
  }
  return new ProtocolError('UPSTREAM_FAILED', `${what}: ${describe(error)}`);
}

async function probeA2a(deps: ProbeDeps, url: string) {
  const { endpoint, ...card } = await fetchAgentCard(deps.crawler, url, deps);
  return { ...card, ...(endpoint ? { jsonrpc: endpoint } : {}) };
}

async function probeMcp(deps: ProbeDeps, url: string) {
  const client = new McpProbe(deps.crawler, url, deps);
  await client.initialize();
  const tools = await client.listTools();
  return { server_info: client.serverInfo, capabilities: client.capabilities, tools };
}

export function probeEndpoints(deps: ProbeDeps) {
  const discover = defineEndpoint({
    method: 'GET',
    path: '/api/public/discover-agent',
    tool: 'discover_agent',
    success: {
      schema: r.obj({
        url: r.str,
        reachable: r.bool,
        protocol: r.str,
        protocols: r.strings,
        name: r.nul(r.str),
        description: r.nul(r.str),
        mcp: r.opt(r.obj({ server_info: r.any, capabilities: r.any, tools: r.arr(r.any) })),
        a2a: r.opt(r.anyObject),
        probed_at: r.time,
      }),
    },
    summary: 'Probe an agent URL over MCP and A2A',
    description:
      'Tries an MCP initialize + tools/list and the A2A agent card in parallel. 504 when the agent does not answer in time, 502 when it answers with neither protocol.',
    tags: ['Probes'],
    auth: 'none',
    query: v.object({ url: agentUrl }),
    errors: [400, 502, 504],
    handler: ({ query, ip }) =>
      deps.guard.run(ip, query.url, `discover|${query.url}`, async () => {
        const [mcp, a2a] = await Promise.allSettled([probeMcp(deps, query.url), probeA2a(deps, query.url)]);
        const refusal = [mcp, a2a].find(
          (r) => r.status === 'rejected' && r.reason instanceof CrawlerError && (r.reason.code === 'ssrf_blocked' || r.reason.code === 'invalid_url'),
        );
        if (refusal) throw upstreamError((refusal as PromiseRejectedResult).reason, 'probe');
        const protocols = [...(mcp.status === 'fulfilled' ? ['mcp'] : []), ...(a2a.status === 'fulfilled' ? ['a2a'] : [])];
        if (!protocols.length) {
          const reasons = [mcp, a2a].map((r) => (r as PromiseRejectedResult).reason);
          const details = { mcp: describe(reasons[0]), a2a: describe(reasons[1]) };
          const timedOut = reasons.some((r) => r instanceof CrawlerError && r.code === 'timeout');
          throw new ProtocolError(
            timedOut ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_FAILED',
            `The agent at ${query.url} ${timedOut ? 'did not answer in time' : 'answered neither MCP nor A2A'}`,
            { details },
          );
        }
        const m = mcp.status === 'fulfilled' ? mcp.value : null;
        const a = a2a.status === 'fulfilled' ? a2a.value : null;
        return {
          url: query.url,
          reachable: true,
          protocol: protocols[0],
          protocols,
          name: m?.server_info?.name ?? a?.name ?? null,
          description: a?.description ?? null,
          ...(m
            ? { mcp: { server_info: m.server_info, capabilities: m.capabilities, tools: m.tools } }
            : { mcp_error: describe((mcp as PromiseRejectedResult).reason) }),
          ...(a ? { a2a: a } : { a2a_error: describe((a2a as PromiseRejectedResult).reason) }),
          probed_at: deps.clock.now().toISOString(),
        };
      }),
  });

  /** Call a tool (MCP) or skill (A2A) by name; the protocol is the caller's choice or whichever answers. */
  const callAgent = async (url: string, protocol: 'mcp' | 'a2a' | 'auto', tool: string, args: Record<string, unknown>) => {
    try {
      const session = await connectAgent(deps.crawler, url, protocol, deps);
      return { protocol: session.protocol, result: await session.call(tool, args) };
    } catch (error) {
      throw upstreamError(error, tool);
    }
  };

  const formats = defineEndpoint({
    method: 'GET',
    path: '/api/public/agent-formats',
    tool: 'get_agent_formats',
    success: { schema: r.obj({ agent_url: r.str, protocol: r.str, formats: r.arr(r.any), count: r.int, fetched_at: r.time }) },
    summary: 'Creative formats of an agent (list_creative_formats, as an MCP tool or an A2A skill)',
    description:
      'protocol=auto (default) tries MCP and the A2A agent card at once and uses whichever answers (MCP first). 504 when the agent does not answer in time, 502 when it fails.',
    tags: ['Probes'],
    auth: 'none',
    query: v.object({ url: agentUrl, protocol: protocolParam }),
    errors: [400, 502, 504],
    handler: ({ query, ip }) =>
      deps.guard.run(ip, query.url, `formats|${query.protocol}|${query.url}`, async () => {
        const { protocol, result } = await callAgent(query.url, query.protocol, 'list_creative_formats', {});
        const list = Array.isArray((result as { formats?: unknown[] })?.formats) ? (result as { formats: unknown[] }).formats : [];
        return { agent_url: query.url, protocol, formats: list, count: list.length, fetched_at: deps.clock.now().toISOString() };
      }),
  });

  const products = defineEndpoint({
    method: 'GET',
    path: '/api/public/agent-products',
    tool: 'get_agent_products',
    success: { schema: r.obj({ agent_url: r.str, protocol: r.str, products: r.arr(r.any), count: r.int, fetched_at: r.time }) },
    summary: 'Products of a sales agent (get_products, as an MCP tool or an A2A skill)',
    description:
      'protocol=auto (default) tries MCP and the A2A agent card at once and uses whichever answers (MCP first). 504 when the agent does not answer in time, 502 when it fails.',
    tags: ['Probes'],
    auth: 'none',
    query: v.object({ url: agentUrl, brief: v.optional(v.pipe(v.string(), v.maxLength(2000, 'is too long'))), protocol: protocolParam }),
    errors: [400, 502, 504],
    handler: ({ query, ip }) =>
      deps.guard.run(ip, query.url, `products|${query.protocol}|${query.url}|${query.brief ?? ''}`, async () => {
        const { protocol, result } = await callAgent(query.url, query.protocol, 'get_products', query.brief ? { brief: query.brief } : {});
        const list = Array.isArray((result as { products?: unknown[] })?.products) ? (result as { products: unknown[] }).products : [];
        return { agent_url: query.url, protocol, products: list, count: list.length, fetched_at: deps.clock.now().toISOString() };
      }),
  });

  const validatePublisher = defineEndpoint({
    method: 'GET',
    path: '/api/public/validate-publisher',
    tool: 'validate_publisher',
    success: {
      schema: r.obj({
        domain: r.str,
        found: r.bool,
        valid: r.bool,
        source: r.opt(r.str),
        url: r.str,
        errors: r.arr(r.issue),
        authorized_agents: r.opt(r.int),
        properties: r.opt(r.int),
        checked_at: r.time,
      }),
    },
    summary: "Fetch and validate a publisher's adagents.json (nothing is stored)",
    tags: ['Probes'],
    auth: 'none',
    query: v.object({ domain: v.pipe(v.string('is required'), v.maxLength(300, 'is too long')) }),
    errors: [400, 502, 504],
    handler: ({ query, ip }) =>
      deps.guard.run(ip, query.domain, `publisher|${query.domain.toLowerCase()}`, async () => {
        const domain = tryNormalizeDomain(query.domain);
        if (!domain) throw invalid('query.domain: must be a domain name such as example.com', 'domain');
        try {
          await deps.crawler.assertPublicHost(domain);
        } catch (error) {
          throw upstreamError(error, domain);
        }
        let doc: FetchedDocument;
        try {
          doc = await fetchAdagents(deps.crawler, domain, deps.validator, deps.origin, deps.timeoutMs);
        } catch (error) {
          throw upstreamError(error, domain);
        }
        const checked_at = deps.clock.now().toISOString();
        if (doc.kind === 'missing')
          return { domain, found: false, valid: false, url: doc.url, errors: [{ path: '/', message: `HTTP ${doc.status}` }], checked_at };
        const file = (doc.doc ?? {}) as { authorized_agents?: unknown[]; properties?: unknown[] };
        return {
          domain,
          found: true,
          valid: doc.issues.length === 0,
          source: doc.source,
          url: doc.url,
          errors: doc.issues,
          authorized_agents: Array.isArray(file.authorized_agents) ? file.authorized_agents.length : 0,
          properties: Array.isArray(file.properties) ? file.properties.length : 0,
          checked_at,
        };
      }),
  });

  return [discover, formats, products, validatePublisher];
}
