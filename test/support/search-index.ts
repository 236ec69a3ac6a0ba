import type { DatabasePort } from '../../core/ports/database.ts';
import type { SearchPort } from '../../core/ports/search.ts';
import { sql } from '../../core/sql.ts';
import { profileDocuments } from '../../plugins/registry-agents/store/profiles.ts';

/** Every document of the index, in agent-url order (a member of no organization sees public and members_only). */
export async function indexedDocuments(search: SearchPort): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const page = await search.search({ filters: {}, limit: 200, cursor, viewer: { member: true, orgId: null } });
    out.push(...page.results.map(({ relevance_score: _r, matched_filters: _m, ...doc }) => doc));
    cursor = page.cursor;
  } while (cursor);
  return out.sort((a, b) => String(a.agent_url).localeCompare(String(b.agent_url)));
}

/** What the database says the index must hold (no private agents in these tests). */
export async function expectedDocuments(db: DatabasePort): Promise<Array<Record<string, unknown>>> {
  const docs = await profileDocuments(db);
  return docs
    .map(({ agent_id: _a, visibility: _v, owner_org_id: _o, ...doc }) => doc as Record<string, unknown>)
    .sort((a, b) => String(a.agent_url).localeCompare(String(b.agent_url)));
}

export async function outboxRows(db: DatabasePort): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM registry_search_outbox`);
  return row!.n;
}
