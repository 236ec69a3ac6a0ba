import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';

/**
 * The discovery model's tables (owned by plugins/registry-agents, branch `discovery`) for tests of
 * features that write them, until that plugin's own definition is on this branch. Same owner name,
 * so the migration bookkeeping matches the real plugin's.
 */
export const registryModel = definePlugin({
  name: 'registry-agents',
  requires: [Database],
  migrations: loadMigrations(join(import.meta.dir, '../../plugins/registry-agents/migrations')),
});
