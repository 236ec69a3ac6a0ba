import type { ListReaderPort } from '../../core/ports/list-reader.ts';
import type { ListsDeps } from './deps.ts';
import { COLLECTION, PROPERTY } from './kinds.ts';
import { loadList } from './store.ts';
import { tokenMatches } from './tokens.ts';

/** In-process reads of this agent's lists for agents of the same deployment (a seller honouring list targeting). */
export function listReader(deps: ListsDeps): ListReaderPort {
  return {
    async read(kind, listId, reader) {
      const row = await loadList(deps.db, kind, listId);
      if (!row) return null;
      const allowed = reader.token !== undefined ? tokenMatches(reader.token, row.token_hash) : row.owner === reader.orgId;
      if (!allowed) return null;
      const spec = kind === 'property' ? PROPERTY : COLLECTION;
      const resolution = await spec.resolve(row.sources, row.filters, deps.catalog);
      return { items: resolution.items as Array<Record<string, unknown>> };
    },
  };
}
