import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { HttpCrawler, parseAllowlist, type Resolver } from './crawler.ts';

export { HttpCrawler, systemResolver, type Resolver, type HttpCrawlerOptions } from './crawler.ts';

const options = v.object({
  /** Loopback addresses/CIDRs reachable despite the SSRF guard (tests only; production presets never set it). */
  allowlist: v.optional(
    v.pipe(
      v.array(v.string()),
      v.check((entries) => {
        try {
          parseAllowlist(entries);
          return true;
        } catch {
          return false;
        }
      }, 'entries must be loopback addresses or CIDRs (127.0.0.0/8, ::1)'),
    ),
    [],
  ),
  /** Injected name resolution (tests: make a name resolve to 10.x). */
  resolver: v.optional(v.custom<Resolver>((x) => typeof (x as Resolver)?.lookup === 'function', 'must have lookup(host)')),
  userAgent: v.optional(v.string()),
  /** Trusted CAs (PEM) replacing the system store: tests only. */
  ca: v.optional(v.string()),
});

/** The SSRF-guarded crawler port (outbound HTTP + DNS TXT) over Bun's fetch and node:dns. */
export default definePlugin({
  name: 'crawler-http',
  provides: [Crawler],
  options,
  init(_deps, kernel) {
    kernel.provide(Crawler, new HttpCrawler(kernel.options));
  },
});
