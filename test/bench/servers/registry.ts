// The registry preset on the storage chosen by the environment, seeded with one brand to resolve.
// As hosts/start.ts does: the serving process runs with the memory budget (MEMORY_BUDGET_MB).
import { defaultIds } from '../../../core/ports/ids.ts';
import { assemble } from '../../../core/deployment.ts';
import { serve } from '../../../hosts/serve.ts';
import { Database } from '../../../core/ports/database.ts';
import preset from '../../../config/registry.ts';
import { createApiKey, createOrganization } from '../../../plugins/auth/store.ts';
import { applyMemoryBudget } from '../../../hosts/memory-budget.ts';

applyMemoryBudget();

const deployment = await assemble(preset);
const server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
const db = deployment.get(Database);
const org = await createOrganization(db, defaultIds, { name: `bench-${Date.now()}`, tier: 'member' });
const { key } = await createApiKey(db, defaultIds, { orgId: org.id, name: 'bench' });
const saved = await fetch(`${server.url.href}api/brands/save`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ domain: 'bench-brand.example', brand_name: 'Bench Brand' }),
});
if (!saved.ok) throw new Error(`seeding failed: ${saved.status} ${await saved.text()}`);
console.log(`READY ${server.port}`);
process.on('SIGTERM', async () => {
  await server.close();
  process.exit(0);
});
