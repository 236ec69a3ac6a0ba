import { chooseAdapter } from '../core/config.ts';
import storagePostgres from '../plugins/storage-postgres/index.ts';
import storagePglite from '../plugins/storage-pglite/index.ts';

/**
 * The storage adapter: `STORAGE=postgres|pglite`, by default Postgres when DATABASE_URL is set and
 * embedded PGlite otherwise. Each adapter reads its own variables (DATABASE_URL, DATA_DIR, ...).
 */
export const storage = chooseAdapter({
  variable: 'STORAGE',
  fallback: (env) => (env.DATABASE_URL ? 'postgres' : 'pglite'),
  adapters: { postgres: () => storagePostgres(), pglite: () => storagePglite() },
});
