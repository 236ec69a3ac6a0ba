import { definePreset } from '../core/config.ts';
import { storageFor } from './storage.ts';
import restHost from '../hosts/rest/index.ts';

/** Self-hosted registry: embedded PGlite by default, Postgres when DATABASE_URL is set. */
export default definePreset({
  name: 'registry',
  plugins: [storageFor, restHost({ title: 'Registry API' })],
});
