import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { isExampleHost, normalizeAgentUrl } from '../../lib/urls.ts';
import { connectAgent, describeFailure } from '../../lib/agent-clients/session.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { CreativeFormatsPort } from '../../core/ports/creative-formats.ts';
import type { FormatRef, InventoryPort } from '../../core/ports/inventory.ts';
import type { Logger } from '../../core/log.ts';

/**
 * Whether format ids are real: named by one of this seller's own products, if it has any (it sells
 * them, so it takes creatives in them), else defined by a creative agent: the same deployment's, or a remote
 * one asked once and cached.
 */
export interface FormatResolver {
  /** Known (true) or not (false) per `formatKey`; SERVICE_UNAVAILABLE when an agent cannot be asked. */
  check(formats: readonly FormatRef[]): Promise<Map<string, boolean>>;
}

export interface FormatResolverDeps {
  db: DatabasePort;
  clock: ClockPort;
  local: CreativeFormatsPort | undefined;
  /** The seller's products; absent on a creative vendor's library (no products: formats are the creative agents' only). */
  inventory: InventoryPort | undefined;
  /**
   * A sandbox seller takes formats of creative agents under the reserved example names (RFC 2606:
   * `.example`, example.com/.net/.org; nobody runs an agent there) as given: test fixtures name them.
   */
  sandbox: boolean;
  crawler: CrawlerPort | undefined;
  logger: Logger;
}

const LIMITS = { timeoutMs: 10_000, maxBytes: 5 * 1024 * 1024 };

/** Ask a remote creative agent with `list_creative_formats` (its URL, else `{url}/mcp`) through the SSRF-guarded crawler. */
async function askRemote(crawler: CrawlerPort, agentUrl: string, ids: string[]): Promise<Map<string, string>> {
  let lastError: unknown;
  for (const url of agentUrl.endsWith('/mcp') ? [agentUrl] : [agentUrl, `${agentUrl}/mcp`]) {
    try {
      const session = await connectAgent(crawler, url, 'auto', LIMITS);
      const result = (await session.call('list_creative_formats', { format_ids: ids.map((id) => ({ agent_url: agentUrl, id })) })) as {
        formats?: Array<{ format_id?: { id?: unknown }; name?: unknown }>;
      };
      const known = new Map<string, string>();
      for (const f of result?.formats ?? [])
        if (typeof f?.format_id?.id === 'string') known.set(f.format_id.id, typeof f.name === 'string' ? f.name : f.format_id.id);
      return known;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

export function createFormatResolver(deps: FormatResolverDeps, cacheSeconds: number): FormatResolver {
  const localUrls = new Set(deps.local ? [deps.local.agentUrl, ...(deps.local.mirrors ?? [])].map((u) => normalizeAgentUrl(u) ?? u) : []);
  const isLocal = (agent: string) => localUrls.has(agent);
  return {
    async check(formats) {
      const out = new Map<string, boolean>();
      // First what memory answers exactly: example hosts on a sandbox seller, and this deployment's
      // catalog where it defines the id (formats are never removed from it, so any copy that holds an
      // id is right). Only the rest asks the products (whose copy must be proven current) and the agents.
      const refs: Array<{ agent: string; f: FormatRef }> = [];
      const localIds = new Set<string>();
      for (const f of formats) {
        const agent = normalizeAgentUrl(f.agent_url) ?? f.agent_url;
        if (out.has(`${agent}#${f.id}`)) continue;
        if (deps.sandbox && isExampleHost(agent)) {
          out.set(`${agent}#${f.id}`, true);
          continue;
        }
        out.set(`${agent}#${f.id}`, false);
        refs.push({ agent, f });
        if (isLocal(agent)) localIds.add(f.id);
      }
      const defined = localIds.size ? await deps.local!.find([...localIds]) : new Map();
      const byAgent = new Map<string, Set<string>>();
      for (const { agent, f } of refs) {
        if (isLocal(agent) && defined.has(f.id)) {
          out.set(`${agent}#${f.id}`, true);
          continue;
        }
        if (((await deps.inventory?.search({ formatIds: [f], limit: 1 }))?.products.length ?? 0) > 0) {
          out.set(`${agent}#${f.id}`, true);
          continue;
        }
        // The local agent's answer is already in (not defined there).
        if (!isLocal(agent)) (byAgent.get(agent) ?? byAgent.set(agent, new Set()).get(agent)!).add(f.id);
      }
      for (const [agent, set] of byAgent) {
        const ids = [...set];
        const now = deps.clock.now();
        const fresh = new Date(now.getTime() - cacheSeconds * 1000);
        const cached = await deps.db.query<{ format_id: string; known: boolean }>(sql`
          SELECT format_id, known FROM sales_format_cache WHERE agent_url = ${agent}::text AND format_id = ANY(${ids}::text[]) AND fetched_at >= ${fresh}::timestamptz`);
        for (const c of cached) out.set(`${agent}#${c.format_id}`, c.known);
        const missing = ids.filter((id) => !cached.some((c) => c.format_id === id));
        if (missing.length === 0) continue;
        if (!deps.crawler) {
          throw new ProtocolError('SERVICE_UNAVAILABLE', `Format ids of ${agent} cannot be validated: this deployment makes no outbound calls`, {
            field: 'format_id.agent_url',
          });
        }
        let known: Map<string, string>;
        try {
          known = await askRemote(deps.crawler, agent, missing);
        } catch (error) {
          deps.logger.warn({ agent, err: describeFailure(error) }, 'creative agent could not be asked for formats');
          throw new ProtocolError('SERVICE_UNAVAILABLE', `The creative agent ${agent} could not be reached to validate format ids; retry later`, {
            field: 'format_id.agent_url',
            recovery: 'transient',
          });
        }
        for (const id of missing) {
          out.set(`${agent}#${id}`, known.has(id));
          await deps.db.query(sql`
            INSERT INTO sales_format_cache (agent_url, format_id, known, name, fetched_at)
            VALUES (${agent}::text, ${id}::text, ${known.has(id)}::boolean, ${known.get(id) ?? null}::text, ${now}::timestamptz)
            ON CONFLICT (agent_url, format_id) DO UPDATE SET known = EXCLUDED.known, name = EXCLUDED.name, fetched_at = EXCLUDED.fetched_at`);
        }
      }
      return out;
    },
  };
}
