import * as v from 'valibot';
import { defineEndpoint, Reply } from '../../core/endpoint.ts';
import { ProtocolError, invalid, notFound } from '../../core/errors.ts';
import { CrawlerError, type CrawlerPort } from '../../core/ports/crawler.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { RateLimiterPort } from '../../core/ports/rate-limit.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import { tryNormalizeDomain } from '../../lib/domain.ts';
import { enqueueCrawl, findJob, type JobSettings } from './jobs.ts';
import * as r from '../../lib/response-schemas.ts';

/** SPEC Limits: one request per domain per 5 minutes, 30 per hour per user (counted in the database). */
export const CRAWL_LIMITS = { perDomain: { limit: 1, windowSeconds: 300 }, perUser: { limit: 30, windowSeconds: 3600 } };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Deps {
  db: DatabasePort;
  crawler: CrawlerPort;
  limiter: RateLimiterPort;
  clock: ClockPort;
  ids: IdsPort;
  settings: JobSettings;
}

function limited(retryAfter: number, what: string): ProtocolError {
  return new ProtocolError('RATE_LIMITED', `Too many crawl requests (${what}); retry in ${retryAfter} s`, { retryAfter: Math.max(1, Math.ceil(retryAfter)) });
}

export function crawlEndpoints(deps: Deps) {
  const request = defineEndpoint({
    method: 'POST',
    path: '/api/registry/crawl-request',
    tool: 'request_crawl',
    success: { status: 202, description: 'Queued', schema: r.obj({ message: r.str, domain: r.str, request_id: r.str }) },
    summary: 'Request a re-crawl of a publisher domain',
    description:
      'Validates the domain (format, DNS must resolve to public addresses), queues a crawl and answers 202 at once. One request per domain per 5 minutes and 30 per hour per user, shared by every instance.',
    tags: ['Crawling'],
    auth: 'required',
    body: v.object({ domain: v.pipe(v.string('must be a string'), v.maxLength(300, 'is too long')) }),
    errors: [400, 401, 429],
    async handler({ body, principal }) {
      const domain = tryNormalizeDomain(body.domain);
      if (!domain) throw invalid('domain: must be a domain name such as example.com', 'domain');
      try {
        await deps.crawler.assertPublicHost(domain);
      } catch (error) {
        if (!(error instanceof CrawlerError)) throw error;
        if (error.code === 'ssrf_blocked') throw invalid(`domain: ${domain} is refused: ${error.message}`, 'domain');
        throw invalid(`domain: ${domain} does not resolve (${error.message})`, 'domain');
      }
      // Per user first: a refused hit is not counted, so a user refused here does not lock the domain.
      const user = await deps.limiter.consume(`crawl-request:user:${principal!.id}`, CRAWL_LIMITS.perUser.limit, CRAWL_LIMITS.perUser.windowSeconds);
      if (!user.allowed) throw limited(user.retryAfter, '30 per hour per user');
      const perDomain = await deps.limiter.consume(`crawl-request:domain:${domain}`, CRAWL_LIMITS.perDomain.limit, CRAWL_LIMITS.perDomain.windowSeconds);
      if (!perDomain.allowed) throw limited(perDomain.retryAfter, `one per 5 minutes for ${domain}`);
      const job = await enqueueCrawl(deps.db, deps, { domain, reason: 'request', requestedBy: principal!.id });
      return new Reply(202, { message: `Crawl of ${domain} queued`, domain, request_id: job.id });
    },
  });

  const status = defineEndpoint({
    method: 'GET',
    path: '/api/registry/crawl-request/{id}',
    tool: 'get_crawl_request',
    success: {
      schema: r.obj({
        request_id: r.str,
        domain: r.str,
        status: r.str,
        attempts: r.int,
        max_attempts: r.int,
        result: r.any,
        last_error: r.nul(r.str),
        created_at: r.nul(r.time),
        finished_at: r.nul(r.time),
        next_attempt_at: r.nul(r.time),
      }),
    },
    summary: 'Status of a crawl request',
    tags: ['Crawling'],
    auth: 'required',
    params: v.object({ id: v.pipe(v.string(), v.regex(UUID, 'must be a request id (UUID)')) }),
    errors: [400, 401, 404],
    async handler({ params }) {
      const job = await findJob(deps.db, params.id);
      if (!job) throw notFound(`No crawl request ${params.id}`);
      const iso = (d: unknown) => (d ? new Date(d as string).toISOString() : null);
      return {
        request_id: job.id,
        domain: job.domain,
        status: job.status,
        attempts: job.attempts,
        max_attempts: job.max_attempts,
        result: job.result ?? null,
        last_error: job.last_error,
        created_at: iso(job.created_at),
        finished_at: iso(job.finished_at),
        next_attempt_at: job.status === 'queued' ? iso(job.run_after) : null,
      };
    },
  });
  return [request, status];
}
