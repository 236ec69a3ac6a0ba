import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Resolver } from '../../plugins/crawler-http/index.ts';

/** Self-signed certificate for pub.test, *.pub.test, other.test, *.other.test (test/fixtures/tls). */
export const TEST_CERT = readFileSync(join(import.meta.dir, '../fixtures/tls/cert.pem'), 'utf8');
export const TEST_KEY = readFileSync(join(import.meta.dir, '../fixtures/tls/key.pem'), 'utf8');

/**
 * A resolver answering from a table (tests): names map to address lists; unknown names fail like
 * NXDOMAIN. `calls` counts lookups per name so tests can see that a request resolved once.
 */
export function tableResolver(table: Record<string, string[] | (() => string[])>, txt: Record<string, string[][]> = {}): Resolver & { calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  return {
    calls,
    async lookup(host) {
      calls[host] = (calls[host] ?? 0) + 1;
      const entry = table[host];
      if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return typeof entry === 'function' ? entry() : entry;
    },
    async resolveTxt(name) {
      const records = txt[name];
      if (!records) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      return records;
    },
  };
}
