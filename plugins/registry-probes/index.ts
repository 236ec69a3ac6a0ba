import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Clock } from '../../core/ports/clock.ts';
import { createSchemaValidator as createDocumentValidator } from '../registry-agents/schema-validation.ts';
import { DEFAULT_ORIGIN } from '../registry-crawl/documents.ts';
import { probeEndpoints } from './endpoints.ts';

/**
 * Public probes of agents and publishers (discover-agent, agent-formats, agent-products,
 * validate-publisher). Every request goes out through the crawler port: same SSRF guard,
 * time and size limits as crawling.
 */
export default definePlugin({
  name: 'registry-probes',
  requires: [Crawler],
  options: v.object({
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(60_000)), 10_000),
    maxBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1024)), 5 * 1024 * 1024),
    /** Where validate-publisher fetches a domain's files; tests point it at a loopback port. */
    origin: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/\{domain\}(:\d+)?$/, 'must look like https://{domain}')), DEFAULT_ORIGIN),
  }),
  register(ctx) {
    ctx.get(Endpoints).add(
      ...probeEndpoints({
        crawler: ctx.get(Crawler),
        validator: createDocumentValidator(),
        clock: ctx.get(Clock),
        timeoutMs: ctx.options.timeoutMs,
        maxBytes: ctx.options.maxBytes,
        origin: ctx.options.origin,
      }),
    );
  },
});
