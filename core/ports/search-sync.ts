import { token } from '../token.ts';

/** State of the search outbox and the index it feeds. */
export interface SearchSyncStatus {
  /** Kind of the Search adapter (`postgres`, `meilisearch`). */
  kind: string;
  /** Outbox rows waiting, and how many of them are backing off after a failed attempt. */
  pending: number;
  failing: number;
  /** The watermark in the database and the stamp the index carries; they agree when nothing is behind. */
  watermark: { generation: string | null; version: number };
  stamp: { generation: string; version: number } | null;
}

/**
 * Keeps the agent search index in step with the registry database (provided by registry-agents;
 * without a Search adapter every method rejects, saying so). Profile changes are queued in the
 * writer's transaction; a scheduler job applies them. These methods are for CLIs and tests: they
 * wait for the drain lock instead of skipping when another instance holds it.
 */
export interface SearchSyncPort {
  /** Apply every change that is due; resolves with the number of agents applied. Adapter errors back off, never throw. */
  drain(): Promise<number>;
  /** Rebuild: clear the index, queue every profile under a new generation, and drain. Resolves with the documents indexed. */
  reindex(): Promise<number>;
  status(): Promise<SearchSyncStatus>;
}

export const SearchSync = token<SearchSyncPort>('registry.search-sync');
