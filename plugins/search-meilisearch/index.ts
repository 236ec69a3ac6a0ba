import * as v from 'valibot';
import { MeilisearchApiError, Meilisearch, type EnqueuedTaskPromise } from 'meilisearch';
import { definePlugin } from '../../core/plugin.ts';
import { ProtocolError } from '../../core/errors.ts';
import { Search, type AgentSearchHit, type SearchPort } from '../../core/ports/search.ts';
import { decodeCursor, nextCursor, queryFingerprint } from '../../lib/search-cursor.ts';
import {
  INDEX_SETTINGS,
  STAMP_ID,
  documentId,
  fromMeiliHit,
  isAfter,
  searchParams,
  toMeiliDocument,
  type MeiliAgentDocument,
  type MeiliStampDocument,
} from './translate.ts';

export interface MeilisearchOptions {
  url: string;
  apiKey?: string;
  /** Index uid (tests use one per run). */
  index?: string;
  /** How long a write waits for Meilisearch to process its task. */
  taskTimeoutMs?: number;
}

const apiCode = (error: unknown) => (error instanceof MeilisearchApiError ? error.cause?.code : undefined);

/**
 * Agent inventory search on Meilisearch. No I/O when created: the index and its settings are
 * made on first use (the registry's first outbox drain at start-up, or a search), idempotently,
 * and again after a failure. Writes wait for their task, so a change is searchable when the
 * call resolves and a failed task is an error the outbox retries.
 */
export function createMeilisearchSearch(options: MeilisearchOptions): SearchPort & { dropIndex(): Promise<void> } {
  const client = new Meilisearch({ host: options.url, apiKey: options.apiKey, defaultWaitOptions: { timeout: options.taskTimeoutMs ?? 60_000 } });
  const uid = options.index ?? 'agent_profiles';
  const index = client.index<MeiliAgentDocument>(uid);

  const wait = async (p: EnqueuedTaskPromise, allowed?: string) => {
    const task = await p.waitTask();
    if (task.status === 'failed' && task.error?.code !== allowed) {
      throw new ProtocolError('SERVICE_UNAVAILABLE', `search index update failed: ${task.error?.message ?? 'unknown'}`);
    }
  };
  let ready: Promise<void> | null = null;
  const ensureIndex = () => {
    ready ??= (async () => {
      await wait(client.createIndex(uid, { primaryKey: 'id' }), 'index_already_exists');
      // Settings are merged (PATCH): applying the same ones again changes nothing.
      await wait(index.updateSettings(INDEX_SETTINGS));
    })().catch((error) => {
      ready = null;
      throw error;
    });
    return ready;
  };

  return {
    kind: 'meilisearch',
    async upsert(documents) {
      await ensureIndex();
      for (let i = 0; i < documents.length; i += 5000) await wait(index.addDocuments(documents.slice(i, i + 5000).map(toMeiliDocument), { primaryKey: 'id' }));
    },
    async remove(agentUrls) {
      if (agentUrls.length === 0) return;
      await ensureIndex();
      await wait(index.deleteDocuments(agentUrls.map(documentId)));
    },
    async clear() {
      await ensureIndex();
      await wait(index.deleteAllDocuments());
    },
    async stamp() {
      await ensureIndex();
      try {
        const doc = await index.getDocument<MeiliStampDocument>(STAMP_ID);
        return { generation: doc.generation, version: doc.version };
      } catch (error) {
        if (apiCode(error) === 'document_not_found') return null;
        throw error;
      }
    },
    async setStamp(stamp) {
      await ensureIndex();
      const doc: MeiliStampDocument = { id: STAMP_ID, visibility: 'stamp', generation: stamp.generation, version: stamp.version };
      await wait(index.addDocuments([doc as never], { primaryKey: 'id' }));
    },
    async dropIndex() {
      ready = null;
      await wait(client.deleteIndex(uid), 'index_not_found');
    },
    async search(query) {
      await ensureIndex();
      const fingerprint = queryFingerprint(query);
      const cursor = query.cursor ? decodeCursor(query.cursor, fingerprint) : null;
      const params = searchParams(query, cursor);
      // The cursor filter decides; the same comparison in code drops any row it let through that
      // is not strictly after the cursor (string filters have had false positives), and the next
      // rows are fetched in their place, in doubling chunks.
      const hits: Array<AgentSearchHit & { base: number }> = [];
      for (let offset = 0; hits.length < params.limit; ) {
        const want = Math.max(params.limit - hits.length, offset);
        const response = await index.search<MeiliAgentDocument>('', { ...params, offset, limit: want });
        for (const h of response.hits) if (hits.length < params.limit && isAfter(h, cursor)) hits.push(fromMeiliHit(h, query));
        if (response.hits.length < want) break;
        offset += response.hits.length;
      }
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
  taskTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100)), 60_000),
});

/** Agent inventory search on a Meilisearch server (SEARCH=meilisearch). */
export default definePlugin({
  name: 'search-meilisearch',
  provides: [Search],
  env: { MEILISEARCH_URL: 'url', MEILISEARCH_KEY: 'apiKey', MEILISEARCH_INDEX: 'index' },
  options,
  init(_deps, kernel) {
    kernel.provide(Search, createMeilisearchSearch(kernel.options));
  },
});
