import * as v from 'valibot';
import { definePlugin, optional } from '../../core/plugin.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Clock } from '../../core/ports/clock.ts';
import { RequestSigner } from '../../core/ports/request-signer.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { createSchemaValidator as createDocumentValidator } from '../../lib/registry-documents/schema-validation.ts';
import { DEFAULT_ORIGIN } from '../../lib/registry-documents/fetch.ts';
import { probeEndpoints } from './endpoints.ts';
import { createProbeGuard } from './guard.ts';

const count = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/**
 * Public probes of agents and publishers (discover-agent, agent-formats, agent-products,
 * validate-publisher). Every request goes out through the crawler port: same SSRF guard,
 * time and size limits as crawling; and, since anyone may call them, rate limits per client and
 * per target (shared by instances through the RateLimiter port when deployed), a cap on probes
 * running at once, a short answer cache, and default ports only.
 */
export default definePlugin({
  name: 'registry-probes',
  deps: { crawler: Crawler, clock: Clock, endpoints: Endpoints, limiter: optional(RateLimiter), signer: optional(RequestSigner) },
  env: { PROBE_ALLOWED_PORTS: 'allowedPorts' },
  options: v.object({
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(60_000)), 10_000),
    maxBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1024)), 5 * 1024 * 1024),
    /** Where validate-publisher fetches a domain's files; tests point it at a loopback port. */
    origin: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/\{domain\}(:\d+)?$/, 'must look like https://{domain}')), DEFAULT_ORIGIN),
    perIpPerMinute: v.optional(count(1, 100_000), 20),
    perTargetPerMinute: v.optional(count(1, 100_000), 10),
    maxConcurrent: v.optional(count(1, 1000), 8),
    cacheSeconds: v.optional(count(0, 3600), 60),
    /** Ports besides 443/80 that probes may reach (comma-separated in PROBE_ALLOWED_PORTS). */
    allowedPorts: v.optional(
      v.pipe(
        v.union([
          v.array(v.number()),
          v.pipe(
            v.string(),
            v.transform((s) => s.split(',').filter(Boolean).map(Number)),
          ),
        ]),
        v.check((ports) => ports.every((p) => Number.isInteger(p) && p > 0 && p < 65536), 'must be port numbers'),
      ),
      [],
    ),
  }),
  init({ crawler, clock, endpoints, limiter, signer }, kernel) {
    const { timeoutMs, maxBytes, origin, allowedPorts, ...limits } = kernel.options;
    // The configured origin's port (tests, a publisher mirror) is configuration too.
    const originPort = /:(\d+)$/.exec(origin)?.[1];
    const guard = createProbeGuard({ limiter, clock }, { ...limits, allowedPorts: [...allowedPorts, ...(originPort ? [Number(originPort)] : [])] });
    // Calls to agents are signed when the deployment has a request-signing key.
    const sign = signer ? { sign: (r: Parameters<typeof signer.sign>[0]) => signer.sign(r) } : {};
    endpoints.add(
      ...probeEndpoints({ crawler: guard.crawler(crawler), validator: createDocumentValidator(), clock, guard, timeoutMs, maxBytes, origin, ...sign }),
    );
  },
});
