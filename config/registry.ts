import { definePreset } from '../core/config.ts';
import { storage } from './storage.ts';
import { registryFeatures } from './registry-features.ts';
import restHost from '../hosts/rest/index.ts';
import auth from '../plugins/auth/index.ts';
import mcpEndpoints from '../hosts/mcp-endpoints/index.ts';
import web from '../hosts/web/index.ts';

/** Self-hosted registry: embedded PGlite by default, Postgres when DATABASE_URL is set. */
export default definePreset({
  name: 'registry',
  plugins: [
    storage,
    auth(),
    ...registryFeatures(),
    restHost({ title: 'Registry API' }),
    // The same endpoint definitions as MCP tools at /mcp.
    mcpEndpoints(),
    // The web page at / (search, browse, history, live feed, API reference).
    web(),
  ],
});
