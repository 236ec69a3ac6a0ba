import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { AgentCapabilities, AgentState, DiscoveryPort } from '../../core/ports/discovery.ts';
import { upsertOperatorFromBrandJson, upsertPublisherFromAdagents } from './projection.ts';
import { recordAgentCapabilities } from './store/agents.ts';
import type { IdsPort } from '../../core/ports/ids.ts';

interface AgentRow {
  id: string;
  protocol: 'mcp' | 'a2a' | null;
  visibility: string;
  owner_org_id: string | null;
  enrolled: boolean;
  creative_capabilities: unknown;
  signals_capabilities: unknown;
  metrics: AgentCapabilities['metrics'] | null;
}

/** The Discovery port over this plugin's tables; profile changes reach the search index through its outbox. */
export function createDiscovery(db: DatabasePort, ids: IdsPort, searchChanged: () => void): DiscoveryPort {
  return {
    async projectAdagents(domain, doc, opts) {
      const diff = await db.transaction(async (tx) => {
        const d = await upsertPublisherFromAdagents(tx, domain, doc, opts, ids.uuid7);
        await opts.inTransaction?.(tx, d);
        return d;
      });
      searchChanged();
      return diff;
    },
    projectBrandJson(domain, doc, opts) {
      return db.transaction(async (tx) => {
        const d = await upsertOperatorFromBrandJson(tx, domain, doc, opts);
        await opts.inTransaction?.(tx, d);
        return d;
      });
    },
    async isKnownPublisher(domain) {
      return (await db.query(sql`SELECT 1 AS x FROM registry_publishers WHERE domain = ${domain}::text`)).length > 0;
    },
    async publishers() {
      const rows = await db.query<{ domain: string; last_validated: string | Date | null }>(sql`SELECT domain, last_validated FROM registry_publishers`);
      return rows.map((r) => ({ domain: r.domain, lastValidated: r.last_validated ? new Date(r.last_validated) : null }));
    },
    async enrolledAgents() {
      const rows = await db.query<{ url: string; crawled_at: string | Date | null }>(sql`
        SELECT a.url, c.crawled_at FROM registry_agents a LEFT JOIN registry_agent_capabilities c ON c.agent_id = a.id
        WHERE a.owner_org_id IS NOT NULL`);
      return rows.map((r) => ({ url: r.url, crawledAt: r.crawled_at ? new Date(r.crawled_at) : null }));
    },
    async agentState(q, url, lock = false): Promise<AgentState | null> {
      const [row] = await q.query<AgentRow>(sql`
        SELECT a.id::text, a.protocol, a.visibility, a.owner_org_id::text, a.owner_org_id IS NOT NULL AS enrolled,
          c.creative_capabilities, c.signals_capabilities, c.metrics
        FROM registry_agents a LEFT JOIN registry_agent_capabilities c ON c.agent_id = a.id
        WHERE a.url = ${url}::text ${lock ? sql`FOR UPDATE OF a` : sql.empty}`);
      if (!row) return null;
      return {
        id: row.id,
        protocol: row.protocol,
        visibility: row.visibility,
        owner_org_id: row.owner_org_id,
        enrolled: row.enrolled,
        capabilities: {
          creative_capabilities: row.creative_capabilities ?? null,
          signals_capabilities: row.signals_capabilities ?? null,
          metrics: row.metrics ?? [],
        },
      };
    },
    recordAgentCapabilities: (tx, url, caps, now) => recordAgentCapabilities(tx, url, caps, now),
  };
}
