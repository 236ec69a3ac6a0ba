import * as v from 'valibot';
import { Meilisearch } from 'meilisearch';
import { definePlugin } from '../../core/plugin.ts';
import { ProtocolError } from '../../core/errors.ts';
import { Search, type SearchPort } from '../../core/ports/search.ts';
import { decodeCursor, nextCursor, queryFingerprint } from '../../lib/search-cursor.ts';
import { INDEX_SETTINGS, documentId, fromMeiliHit, searchParams, toMeiliDocument, type MeiliAgentDocument } from './translate.ts';

export interface MeilisearchOptions {
  url: string;
  apiKey?: string;
  /** Index uid (tests use one per run). */
  index?: string;
}

/**
 * Agent inventory search on Meilisearch. Writes wait for the task so a profile change is
 * searchable when upsert resolves ("documents kept in sync on every profile change").
 */
export async function createMeilisearchSearch(options: MeilisearchOptions): Promise<SearchPort & { dropIndex(): Promise<void> }> {
  const client = new Meilisearch({ host: options.url, apiKey: options.apiKey });
  const uid = options.index ?? 'agent_profiles';
  const index = client.index<MeiliAgentDocument>(uid);
  await client.createIndex(uid, { primaryKey: 'id' }).waitTask();
  const settings = await index.updateSettings(INDEX_SETTINGS as any).waitTask();
  if (settings.status === 'failed') throw new Error(`search-meilisearch: index settings failed: ${settings.error?.message}`);
  const wait = async (p: ReturnType<typeof index.addDocuments>) => {
    const task = await p.waitTask();
    if (task.status === 'failed') throw new ProtocolError('SERVICE_UNAVAILABLE', `search index update failed: ${task.error?.message ?? 'unknown'}`);
  };
  return {
    kind: 'meilisearch',
    async upsert(documents) {
      for (let i = 0; i < documents.length; i += 5000) await wait(index.addDocuments(documents.slice(i, i + 5000).map(toMeiliDocument), { primaryKey: 'id' }));
    },
    async remove(agentUrls) {
      if (agentUrls.length) await wait(index.deleteDocuments(agentUrls.map(documentId)));
    },
    async clear() {
      await wait(index.deleteAllDocuments());
    },
    async dropIndex() {
      await client.deleteIndex(uid).waitTask();
    },
    async search(query) {
      const fingerprint = queryFingerprint(query);
      const cursor = query.cursor ? decodeCursor(query.cursor, fingerprint) : null;
      const response = await index.search<MeiliAgentDocument>('', searchParams(query, cursor));
      const hits = response.hits.map((h) => fromMeiliHit(h, query));
      const hasMore = hits.length > query.limit;
      const page = hits.slice(0, query.limit);
      return {
        results: page.map(({ base: _b, ...hit }) => hit),
        has_more: hasMore,
        cursor: hasMore
          ? nextCursor(
              page.map((h) => ({ base: h.base, agent_url: h.agent_url })),
              cursor,
              fingerprint,
            )
          : null,
      };
    },
  };
}

const options = v.object({
  url: v.pipe(v.string(), v.url('must be a URL')),
  apiKey: v.optional(v.string()),
  index: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1-100 of [A-Za-z0-9_-]')), 'agent_profiles'),
});

/** Agent inventory search on a Meilisearch server (SEARCH=meilisearch). */
export default definePlugin({
  name: 'search-meilisearch',
  provides: [Search],
  env: { MEILISEARCH_URL: 'url', MEILISEARCH_KEY: 'apiKey', MEILISEARCH_INDEX: 'index' },
  options,
  async init(_deps, kernel) {
    kernel.provide(Search, await createMeilisearchSearch(kernel.options));
  },
});
