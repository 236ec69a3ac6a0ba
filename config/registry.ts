import { definePreset } from '../core/config.ts';
import { storageFor } from './storage.ts';
import restHost from '../hosts/rest/index.ts';
import crawlerHttp from '../plugins/crawler-http/index.ts';
import rateLimit from '../plugins/rate-limit/index.ts';
import registryFeed from '../plugins/registry-feed/index.ts';
import registryCrawl from '../plugins/registry-crawl/index.ts';
import registryProbes from '../plugins/registry-probes/index.ts';

/**
 * Self-hosted registry: embedded PGlite by default, Postgres when DATABASE_URL is set.
 * The crawl pipeline projects into the registry-agents tables (discovery); that plugin must be
 * part of this preset for crawls to succeed.
 */
export default definePreset({
  name: 'registry',
  plugins: [storageFor, crawlerHttp(), rateLimit(), registryFeed(), registryCrawl(), registryProbes(), restHost({ title: 'Registry API' })],
});
