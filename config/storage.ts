import type { AppConfig } from '../core/config.ts';
import { ConfigError } from '../core/config.ts';
import storagePostgres from '../plugins/storage-postgres/index.ts';
import storagePglite from '../plugins/storage-pglite/index.ts';

/** The storage adapter a config asks for: Postgres when a URL is set (or forced), else embedded PGlite. */
export function storageFor(config: AppConfig) {
  const adapter = config.database.adapter === 'auto' ? (config.database.url ? 'postgres' : 'pglite') : config.database.adapter;
  if (adapter === 'postgres') {
    if (!config.database.url) throw new ConfigError('database.url: is required when database.adapter is postgres (set DATABASE_URL)');
    return storagePostgres({ url: config.database.url, schema: config.database.schema });
  }
  return storagePglite({ dataDir: config.database.dataDir, schema: config.database.schema });
}
