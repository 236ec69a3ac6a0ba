import { CrawlerError, type CrawlerPort } from '../../core/ports/crawler.ts';
import { A2aClient, A2aProbeError, fetchAgentCard, type AgentCardInfo } from './a2a.ts';
import { McpProbe, McpProbeError } from './mcp.ts';
import type { SignRequestFn } from '../rfc9421/sign.ts';

export type AgentProtocol = 'mcp' | 'a2a';

export interface AgentLimits {
  timeoutMs: number;
  maxBytes: number;
  /** Sign every request to the agent (RFC 9421 request-signing profile). */
  sign?: SignRequestFn;
  /** Sent with every MCP request (e.g. `authorization`). */
  headers?: Record<string, string>;
}

/** A connected agent: which protocol answered, and how to call one of its tools/skills. */
export interface AgentSession {
  protocol: AgentProtocol;
  call(name: string, input: Record<string, unknown>): Promise<unknown>;
}

/** Neither protocol answered; `reasons` keeps each protocol's failure. */
export class AgentUnreachableError extends Error {
  override name = 'AgentUnreachableError';
  constructor(
    message: string,
    readonly reasons: Partial<Record<AgentProtocol, unknown>>,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

export const isRefusal = (e: unknown) => e instanceof CrawlerError && (e.code === 'ssrf_blocked' || e.code === 'invalid_url');
export const isTimeout = (e: unknown) => e instanceof CrawlerError && e.code === 'timeout';
export const isAgentProtocolError = (e: unknown) => e instanceof McpProbeError || e instanceof A2aProbeError;

export function describeFailure(e: unknown): string {
  return e instanceof Error ? `${e instanceof CrawlerError ? `${e.code}: ` : ''}${e.message}` : String(e);
}

async function mcpSession(crawler: CrawlerPort, url: string, limits: AgentLimits): Promise<AgentSession> {
  const client = new McpProbe(crawler, url, limits);
  await client.initialize();
  return { protocol: 'mcp', call: (name, input) => client.callTool(name, input) };
}

async function a2aSession(crawler: CrawlerPort, url: string, limits: AgentLimits, card?: AgentCardInfo): Promise<AgentSession> {
  const info = card ?? (await fetchAgentCard(crawler, url, limits));
  if (!info.endpoint) throw new A2aProbeError('the agent card declares no JSON-RPC interface');
  const client = new A2aClient(crawler, info.endpoint, limits);
  return { protocol: 'a2a', call: (name, input) => client.callSkill(name, input) };
}

/**
 * Connect to an agent over the given protocol, or over whichever answers (`auto`: MCP initialize
 * and the A2A card are tried at once; MCP wins when both answer). A refused URL is thrown as the
 * crawler's refusal; when nothing answers, AgentUnreachableError says whether anything timed out.
 */
export async function connectAgent(crawler: CrawlerPort, url: string, protocol: AgentProtocol | 'auto', limits: AgentLimits): Promise<AgentSession> {
  if (protocol === 'mcp') return mcpSession(crawler, url, limits);
  if (protocol === 'a2a') return a2aSession(crawler, url, limits);
  const [mcp, a2a] = await Promise.allSettled([mcpSession(crawler, url, limits), a2aSession(crawler, url, limits)]);
  if (mcp.status === 'fulfilled') return mcp.value;
  if (a2a.status === 'fulfilled') return a2a.value;
  const refusal = [mcp.reason, a2a.reason].find(isRefusal);
  if (refusal) throw refusal;
  const timedOut = [mcp.reason, a2a.reason].some(isTimeout);
  throw new AgentUnreachableError(
    `The agent at ${url} ${timedOut ? 'did not answer in time' : 'answered neither MCP nor A2A'}`,
    { mcp: mcp.reason, a2a: a2a.reason },
    timedOut,
  );
}
