import * as v from 'valibot';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { escapeHtml } from '../../lib/html.ts';

const options = v.object({
  /** Where the page is served. */
  path: v.optional(v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9/_-]*$/, 'must be an absolute path')), '/'),
  title: v.optional(v.pipe(v.string(), v.maxLength(100)), 'Registry'),
});

const ASSETS: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };

/** Only our own files; everything the page shows comes from the registry's public API on this origin. */
const SECURITY = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The registry's web page: browse and search brands, publishers, properties and agents, an entry's
 * revision history, the live change feed and the API reference. A small static bundle (HTML, one
 * script, one stylesheet; no build step) over the public REST API; served with a strict CSP.
 */
export default definePlugin({
  name: 'host-web',
  deps: { http: Http },
  options,
  init({ http }, kernel) {
    const dir = join(import.meta.dir, 'assets');
    const base = kernel.options.path.replace(/\/+$/, '');
    const page = readFileSync(join(dir, 'index.html'), 'utf8').replaceAll('{{title}}', escapeHtml(kernel.options.title)).replaceAll('{{base}}', base);
    const files = Object.fromEntries(Object.keys(ASSETS).map((name) => [name, readFileSync(join(dir, name))]));
    http.add(
      {
        method: 'GET',
        path: base || '/',
        handle: () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY } }),
      },
      ...Object.keys(ASSETS).map((name) => ({
        method: 'GET' as const,
        path: `${base}/assets/${name}`,
        handle: () => new Response(files[name], { headers: { 'content-type': ASSETS[name]!, 'cache-control': 'public, max-age=300', ...SECURITY } }),
      })),
    );
  },
});
