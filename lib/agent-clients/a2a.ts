import { CrawlerError, type CrawlerPort, type OutboundResponse } from '../../core/ports/crawler.ts';
import type { SignRequestFn } from '../rfc9421/sign.ts';

/**
 * A minimal A2A client over JSON-RPC, on the crawler port (every request goes through the SSRF
 * guard and its limits). It reads the agent card, picks a JSON-RPC interface (A2A 1.0 when the card
 * declares one, else 0.3) and invokes a skill with exactly one DataPart `{skill, input}`.
 */
export class A2aProbeError extends Error {
  override name = 'A2aProbeError';
}

export interface A2aLimits {
  timeoutMs: number;
  maxBytes: number;
  /** Sign every JSON-RPC request (RFC 9421 request-signing profile). */
  sign?: SignRequestFn;
}

export interface A2aEndpoint {
  url: string;
  version: '1.0' | '0.3';
}

export interface AgentCardInfo {
  card_url: string;
  name: string;
  description?: string;
  protocol_version?: string;
  capabilities?: unknown;
  skills: Array<{ id: unknown; name: unknown; description?: unknown }>;
  /** The JSON-RPC interface skills are sent to, or null when the card declares none. */
  endpoint: A2aEndpoint | null;
}

/** Where an agent card may live for a URL: under the URL's path (path-mounted agents), then at the origin. */
export function cardLocations(url: string): string[] {
  const u = new URL(url);
  const path = u.pathname.replace(/\/+$/, '');
  const bases = new Set<string>();
  if (path) bases.add(path);
  // A URL naming the JSON-RPC endpoint (`/x/a2a`): its card sits under `/x`.
  if (/\/a2a$/.test(path)) bases.add(path.replace(/\/a2a$/, ''));
  bases.add('');
  return [...bases].flatMap((b) => [`${u.origin}${b}/.well-known/agent-card.json`, `${u.origin}${b}/.well-known/agent.json`]);
}

function jsonRpcInterface(card: any): A2aEndpoint | null {
  const interfaces: any[] = Array.isArray(card?.supportedInterfaces) ? card.supportedInterfaces : [];
  const jsonrpc = interfaces.filter((i) => typeof i?.url === 'string' && String(i.protocolBinding ?? '').toUpperCase() === 'JSONRPC');
  const v1 = jsonrpc.find((i) => String(i.protocolVersion ?? '').startsWith('1.'));
  if (v1) return { url: v1.url, version: '1.0' };
  const v03 = jsonrpc.find((i) => String(i.protocolVersion ?? '').startsWith('0.'));
  if (v03) return { url: v03.url, version: '0.3' };
  // A2A 0.3 cards: `url` with `preferredTransport` (JSONRPC when absent), plus `additionalInterfaces`.
  if (typeof card?.url === 'string' && String(card.preferredTransport ?? 'JSONRPC').toUpperCase() === 'JSONRPC') return { url: card.url, version: '0.3' };
  const extra = (Array.isArray(card?.additionalInterfaces) ? card.additionalInterfaces : []).find(
    (i: any) => typeof i?.url === 'string' && String(i.transport ?? '').toUpperCase() === 'JSONRPC',
  );
  return extra ? { url: extra.url, version: '0.3' } : null;
}

/**
 * Fetch and read the agent card of `url`: the first location answering a card wins; a location
 * answering anything else (404, 401, HTML) is skipped. Crawler errors (refusals, timeouts)
 * propagate as they are: every location is on the same host.
 */
export async function fetchAgentCard(crawler: CrawlerPort, url: string, limits: A2aLimits): Promise<AgentCardInfo> {
  let failure: A2aProbeError | null = null;
  for (const location of cardLocations(url)) {
    let res: OutboundResponse;
    try {
      res = await crawler.fetch(location, {
        timeoutMs: limits.timeoutMs,
        maxBytes: limits.maxBytes,
        redirectPolicy: 'same-site',
        accept: ['application/json', 'text/json', 'text/plain'],
        headers: { accept: 'application/json', 'a2a-version': '1.0' },
      });
    } catch (error) {
      if (error instanceof CrawlerError && error.code === 'bad_content_type') {
        failure ??= new A2aProbeError(`agent card at ${location}: ${error.message}`);
        continue;
      }
      throw error;
    }
    if (res.status === 404) continue;
    if (res.status !== 200) {
      failure ??= new A2aProbeError(`agent card answered HTTP ${res.status}`);
      continue;
    }
    let card: any;
    try {
      card = JSON.parse(res.text());
    } catch {
      failure ??= new A2aProbeError('agent card is not JSON');
      continue;
    }
    if (!card || typeof card !== 'object' || typeof card.name !== 'string') {
      failure ??= new A2aProbeError('agent card lacks a name');
      continue;
    }
    return {
      card_url: res.url,
      name: card.name,
      ...(typeof card.description === 'string' ? { description: card.description } : {}),
      ...((card.protocolVersion ?? card.protocol_version) ? { protocol_version: card.protocolVersion ?? card.protocol_version } : {}),
      ...(card.capabilities ? { capabilities: card.capabilities } : {}),
      skills: Array.isArray(card.skills)
        ? card.skills.map((s: any) => ({ id: s?.id, name: s?.name, ...(s?.description ? { description: s.description } : {}) }))
        : [],
      endpoint: jsonRpcInterface(card),
    };
  }
  throw failure ?? new A2aProbeError('no agent card at /.well-known/agent-card.json or /.well-known/agent.json');
}

/** `TASK_STATE_INPUT_REQUIRED` (1.0) and `input-required` (0.3) -> `input-required`. */
function stateName(state: unknown): string {
  return String(state ?? '')
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-');
}

/** A DataPart's value in either wire form: 0.3 `{kind:'data', data}`, 1.0 `{data}`. */
function dataOf(parts: unknown): unknown {
  const list = Array.isArray(parts) ? parts : [];
  for (let i = list.length - 1; i >= 0; i--) {
    const p = list[i];
    if (p && typeof p === 'object' && 'data' in p && (p.kind === undefined || p.kind === 'data')) return p.data;
  }
  return undefined;
}

function taskBody(task: any): unknown {
  for (const artifact of Array.isArray(task?.artifacts) ? task.artifacts : []) {
    const data = dataOf(artifact?.parts);
    if (data !== undefined) return data;
  }
  return dataOf(task?.status?.message?.parts);
}

const FINAL_FAILURES = new Set(['failed', 'rejected', 'canceled', 'cancelled']);
const WAITING = new Set(['submitted', 'working']);

function failureText(body: any): string {
  const e = Array.isArray(body?.errors) ? body.errors[0] : null;
  const text = e?.message ?? body?.message ?? body?.error?.message;
  return typeof text === 'string' ? text.slice(0, 300) : 'no error message';
}

export class A2aClient {
  private nextId = 1;

  constructor(
    private readonly crawler: CrawlerPort,
    readonly endpoint: A2aEndpoint,
    private readonly limits: A2aLimits,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => Bun.sleep(ms),
  ) {}

  private async rpc(method: string, params: Record<string, unknown>): Promise<any> {
    const id = this.nextId++;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.endpoint.version === '1.0') headers['a2a-version'] = '1.0';
    const body = new TextEncoder().encode(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    if (this.limits.sign) Object.assign(headers, await this.limits.sign({ method: 'POST', url: this.endpoint.url, body }));
    let res: OutboundResponse;
    try {
      res = await this.crawler.fetch(this.endpoint.url, {
        method: 'POST',
        headers,
        body,
        timeoutMs: this.limits.timeoutMs,
        maxBytes: this.limits.maxBytes,
        redirectPolicy: 'any-public',
        maxRedirects: 3,
      });
    } catch (error) {
      // The caller's URL was fine; the card pointing somewhere refused is the agent's failure.
      if (error instanceof CrawlerError && (error.code === 'ssrf_blocked' || error.code === 'invalid_url')) {
        throw new A2aProbeError(`the agent card's endpoint ${this.endpoint.url.slice(0, 200)} is refused: ${error.message}`);
      }
      throw error;
    }
    let reply: any;
    try {
      reply = JSON.parse(res.text());
    } catch {
      throw new A2aProbeError(`not a JSON-RPC answer (HTTP ${res.status}, ${res.headers.get('content-type') ?? 'no content type'})`);
    }
    if (reply?.error) throw new A2aProbeError(`JSON-RPC error ${reply.error.code}: ${String(reply.error.message).slice(0, 200)}`);
    if (!reply || reply.id !== id || !('result' in reply)) throw new A2aProbeError(`no JSON-RPC reply (HTTP ${res.status})`);
    return reply.result;
  }

  /**
   * Send `{skill, input}` and return the skill's result body. A task still submitted/working is
   * polled until it ends or the time limit runs out (a `timeout` CrawlerError, like any other wait).
   */
  async callSkill(skill: string, input: Record<string, unknown>): Promise<unknown> {
    const v1 = this.endpoint.version === '1.0';
    const messageId = crypto.randomUUID();
    const message = v1
      ? { messageId, role: 'ROLE_USER', parts: [{ data: { skill, input }, mediaType: 'application/json' }] }
      : { kind: 'message', messageId, role: 'user', parts: [{ kind: 'data', data: { skill, input } }] };
    const result = await this.rpc(v1 ? 'SendMessage' : 'message/send', { message });
    // Time waited is the sum of the pauses between polls (each poll has the crawler's own limit), so no clock is read.
    let waited = 0;
    let task = v1 ? result?.task : result?.kind === 'task' ? result : null;
    const reply = v1 ? result?.message : result?.kind === 'message' ? result : null;
    if (!task && reply) {
      const data = dataOf(reply.parts);
      if (data === undefined) throw new A2aProbeError(`skill ${skill} answered a message without a DataPart`);
      return data;
    }
    for (;;) {
      if (!task || typeof task !== 'object') throw new A2aProbeError(`skill ${skill}: the answer is neither a task nor a message`);
      const state = stateName(task.status?.state);
      const body = taskBody(task);
      if (state === 'completed') {
        if (body === undefined) throw new A2aProbeError(`skill ${skill} completed without a DataPart`);
        return body;
      }
      if (FINAL_FAILURES.has(state)) throw new A2aProbeError(`skill ${skill} ${state}: ${failureText(body)}`);
      if (!WAITING.has(state)) throw new A2aProbeError(`skill ${skill} stopped in state ${state || 'unknown'}`);
      if (waited >= this.limits.timeoutMs) throw new CrawlerError('timeout', `skill ${skill} still ${state} after ${this.limits.timeoutMs} ms`);
      const pause = Math.min(500, Math.max(50, this.limits.timeoutMs - waited));
      await this.sleep(pause);
      waited += pause;
      const polled = await this.rpc(v1 ? 'GetTask' : 'tasks/get', { id: task.id });
      task = v1 ? (polled?.task ?? polled) : polled;
    }
  }
}
