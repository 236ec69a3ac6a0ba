import { definePreset } from '../core/config.ts';
import { storageFor } from './storage.ts';
import { searchFor } from './search.ts';
import restHost from '../hosts/rest/index.ts';
import auth from '../plugins/auth/index.ts';
import registryBrands from '../plugins/registry-brands/index.ts';
import registryProperties from '../plugins/registry-properties/index.ts';
import registryAgents from '../plugins/registry-agents/index.ts';

/** Self-hosted registry: embedded PGlite by default, Postgres when DATABASE_URL is set. */
export default definePreset({
  name: 'registry',
  plugins: [storageFor, auth(), searchFor, registryBrands(), registryProperties(), registryAgents(), restHost({ title: 'Registry API' })],
});
