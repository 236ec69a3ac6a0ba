import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The AdCP version whose request schemas tools publish (vendored by scripts/vendor-schemas.ts). */
export const REQUEST_SCHEMA_VERSION = '3.1.19';
const DIR = join(import.meta.dir, 'schemas', REQUEST_SCHEMA_VERSION);

/**
 * A vendored, self-contained (dereferenced, prose-free) AdCP request schema, e.g.
 * `signals/get-signals-request.json`; a fresh copy on every call. Throws when it was not vendored.
 */
export function adcpRequestSchema(file: string): Record<string, unknown> {
  if (!/^[a-z-]+\/[a-z0-9-]+\.json$/.test(file)) throw new Error(`not a request schema path: ${file}`);
  return JSON.parse(readFileSync(join(DIR, file), 'utf8'));
}
