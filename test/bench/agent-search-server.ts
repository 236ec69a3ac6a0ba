/**
 * Server half of the registry part of scaling.bench.ts: the discovery deployment on Postgres (schema from
 * BENCH_SCHEMA), served on a free loopback port printed as `PORT=<n>`. Spawned by
 * scaling.bench.ts so load generation and the server do not share a process.
 */
// As hosts/start.ts does: the serving process runs with the memory budget (MEMORY_BUDGET_MB).
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { serve } from '../../hosts/serve.ts';
import storagePostgres from '../../plugins/storage-postgres/index.ts';
import auth from '../../plugins/auth/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { applyMemoryBudget } from '../../hosts/memory-budget.ts';

applyMemoryBudget();

const deployment = await assemble(
  definePreset({
    name: 'bench-agent-search',
    plugins: [
      storagePostgres({ url: process.env.DATABASE_URL!, schema: process.env.BENCH_SCHEMA!, max: 10 }),
      auth({ testTokens: [{ token: process.env.BENCH_TOKEN!, name: 'bench', tier: 'member' }] }),
      searchPostgres(),
      registryAgents(),
      restHost(),
    ],
  }),
  { env: { LOG_LEVEL: 'silent' } },
);
const server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
console.log(`PORT=${server.url.port}`);
process.on('SIGTERM', async () => {
  await server.close();
  process.exit(0);
});
