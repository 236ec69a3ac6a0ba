import { afterAll, beforeAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { ManualClock, Clock } from '../../core/ports/clock.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import { Database } from '../../core/ports/database.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { EventLog, type FeedEvent } from '../../core/ports/events.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryCrawl, { enqueueCrawl, claimJobs, completeJob, scheduleDue, runCrawlBatch } from '../../plugins/registry-crawl/index.ts';
import { createSchemaValidator as createDocumentValidator } from '../../lib/registry-documents/schema-validation.ts';
import { managerDomains } from '../../lib/registry-documents/fetch.ts';
import type { WorkerDeps } from '../../plugins/registry-crawl/worker.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import auth from '../../plugins/auth/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { TEST_CERT, loopbackResolver, startPublisherWeb } from '../support/loopback.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import { AdagentsRecords, BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { newKey } from '../support/principals.ts';

const TOKEN = 'crawl-test-token-0123456789';
const ADAGENTS = '/.well-known/adagents.json';
const validator = createDocumentValidator();

const adagents = (host: string, extra: Record<string, unknown> = {}) => ({
  authorized_agents: [{ url: 'https://sales.agent.test/mcp', authorized_for: 'All display', authorization_type: 'property_ids', property_ids: ['home'] }],
  properties: [{ property_id: 'home', property_type: 'website', name: 'Home', identifiers: [{ type: 'domain', value: host }], tags: ['news'] }],
  ...extra,
});

const web = startPublisherWeb();
afterAll(() => web.stop());

test('ads.txt MANAGERDOMAIN parsing', () => {
  expect(managerDomains('# comment\ngoogle.com, pub-1, DIRECT\nmanagerdomain=Manager.example # the manager\nMANAGERDOMAIN = second.example\n')).toEqual([
    'manager.example',
    'second.example',
  ]);
});

forEachDatabase(
  'crawl pipeline',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2026-03-01T00:00:00Z'));
    const plugins = [
      crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test', 'other.test'], { 'intranet.pub.test': ['10.1.2.3'] }), ca: TEST_CERT }),
      registryAgents(),
      registryBrands(),
      registryProperties(),
      registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
      rateLimit({ pruneIntervalMs: 0 }),
      auth({
        testTokens: [
          { token: TOKEN, name: 'crawler-tests' },
          { token: `${TOKEN}-second`, name: 'second' },
        ],
      }),
      registryCrawl({ workers: 0, scheduleIntervalMs: 0, origin: web.origin, ttlSeconds: 3600, backoffSeconds: 60, maxAttempts: 3, leaseSeconds: 120 }),
      restHost(),
    ];
    const a = await startServer(adapter, schema, plugins, { overrides: [[Clock, clock]] });
    // A second instance on the same database (rate limits and jobs are shared).
    const b = await startServer(adapter, schema, plugins, { overrides: [[Clock, clock]] });
    return { a, b, clock, adapter };
  },
  async ({ a, b }) => {
    await b.close();
    await a.close();
  },
  (get, adapter) => {
    const a = (): TestServer => get().a;
    const clock = () => get().clock;
    const db = () => a().deployment.get(Database);
    const deps = (): WorkerDeps => ({
      db: db(),
      crawler: a().deployment.get(Crawler),
      events: a().deployment.get(EventLog),
      projection: a().deployment.get(Discovery),
      validator,
      brandRecords: a().deployment.tryGet(BrandJsonRecords),
      adagentsRecords: a().deployment.tryGet(AdagentsRecords),
      clock: clock(),
      logger: a().deployment.logger,
      origin: web.origin,
      ids: defaultIds,
      settings: { maxAttempts: 3, leaseMs: 120_000, backoffMs: 60_000, maxBackoffMs: 3_600_000, ttlMs: 3_600_000, agentTtlMs: 3_600_000 },
      namespace: a().deployment.config.protocol.namespace,
    });
    let cursor: string | undefined;
    /** Feed events since the last call (read over HTTP, as a follower would). */
    async function newEvents(): Promise<FeedEvent[]> {
      const res = await a().fetch(`/api/registry/feed?limit=10000${cursor ? `&cursor=${cursor}` : ''}`, { token: TOKEN });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { events: FeedEvent[]; cursor: string | null };
      cursor = body.cursor ?? cursor;
      return body.events;
    }
    async function crawl(domain: string) {
      await enqueueCrawl(db(), deps(), { domain, reason: 'cli' });
      let n = 0;
      while ((await runCrawlBatch(deps(), 'test-worker', 4)) > 0) n++;
      return n;
    }
    const types = (events: FeedEvent[]) => events.map((e) => e.event_type);

    test('crawl-request: 202 at once, the status endpoint follows the job to done', async () => {
      web.set('pub.test', ADAGENTS, { body: adagents('pub.test') });
      const res = await a().fetch('/api/registry/crawl-request', { method: 'POST', token: TOKEN, json: { domain: '  HTTPS://Pub.Test/some/path ' } });
      expect(res.status).toBe(202);
      const body = (await res.json()) as { message: string; domain: string; request_id: string };
      expect(body.domain).toBe('pub.test');
      expect(typeof body.message).toBe('string');
      const before = (await (await a().fetch(`/api/registry/crawl-request/${body.request_id}`, { token: TOKEN })).json()) as any;
      expect(before.status).toBe('queued');
      while ((await runCrawlBatch(deps(), 'test-worker', 4)) > 0);
      const after = (await (await a().fetch(`/api/registry/crawl-request/${body.request_id}`, { token: TOKEN })).json()) as any;
      expect(after.status).toBe('done');
      expect(after.result.adagents).toBe('valid');
      expect(after.result.changes.properties_created).toBe(1);
    });

    test('first crawl emits discovery events; property.created payload is exactly the spec shape', async () => {
      const events = await newEvents();
      expect(types(events)).toEqual([
        'publisher.adagents_discovered',
        'property.created',
        'agent.discovered',
        'authorization.granted',
        'agent.profile_updated',
      ]);
      const created = events.find((e) => e.event_type === 'property.created')!;
      expect(Object.keys(created.payload).sort()).toEqual(['classification', 'identifiers', 'property_rid', 'source']);
      expect(created.payload).toEqual({
        property_rid: created.entity_id,
        classification: 'website',
        source: 'adagents_json',
        identifiers: [{ type: 'domain', value: 'pub.test' }],
      });
      expect(created.actor).toBe('crawler');
      const [row] = await db().query<{ status: string }>(sql`SELECT status FROM registry_properties WHERE id = ${created.entity_id}::uuid`);
      expect(row!.status).toBe('active');
    });

    test('re-crawl of an unchanged file changes nothing and emits nothing', async () => {
      await crawl('pub.test');
      expect(await newEvents()).toEqual([]);
    });

    test('active -> stale when the file breaks, stale -> active when it is fixed (events end to end)', async () => {
      web.set('pub.test', ADAGENTS, { body: { authorized_agents: 'nope' } });
      await crawl('pub.test');
      const broken = await newEvents();
      expect(types(broken)).toContain('property.stale');
      expect(types(broken)).toContain('publisher.adagents_changed');
      const stale = broken.find((e) => e.event_type === 'property.stale')!;
      const [row] = await db().query<{ status: string }>(sql`SELECT status FROM registry_properties WHERE id = ${stale.entity_id}::uuid`);
      expect(row!.status).toBe('stale');

      web.set('pub.test', ADAGENTS, { body: adagents('pub.test') });
      await crawl('pub.test');
      const fixed = await newEvents();
      expect(types(fixed)).toContain('property.reactivated');
      expect(fixed.find((e) => e.event_type === 'property.reactivated')!.entity_id).toBe(stale.entity_id);
      const [again] = await db().query<{ status: string }>(sql`SELECT status FROM registry_properties WHERE id = ${stale.entity_id}::uuid`);
      expect(again!.status).toBe('active');
    });

    test('a changed file: property.updated, authorization.modified and revoked/granted', async () => {
      web.set('pub.test', ADAGENTS, {
        body: adagents('pub.test', {
          authorized_agents: [
            { url: 'https://sales.agent.test/mcp', authorized_for: 'Display and video', authorization_type: 'property_ids', property_ids: ['home'] },
            { url: 'https://second.agent.test', authorized_for: 'All', authorization_type: 'property_tags', property_tags: ['news'] },
          ],
          properties: [
            { property_id: 'home', property_type: 'website', name: 'Home page', identifiers: [{ type: 'domain', value: 'pub.test' }], tags: ['news'] },
          ],
        }),
      });
      await crawl('pub.test');
      const t = types(await newEvents());
      for (const expected of ['publisher.adagents_changed', 'property.updated', 'authorization.modified', 'authorization.granted', 'agent.discovered'])
        expect(t).toContain(expected);
      web.set('pub.test', ADAGENTS, { body: adagents('pub.test') });
      await crawl('pub.test');
      expect(types(await newEvents())).toContain('authorization.revoked');
    });

    test('authoritative_location: the pointer is followed once, without redirects', async () => {
      web.set('a.pub.test', ADAGENTS, { body: { authoritative_location: `https://cdn.other.test:${web.port}/net/adagents.json` } });
      web.set('cdn.other.test', '/net/adagents.json', { body: adagents('a.pub.test') });
      await crawl('a.pub.test');
      const events = await newEvents();
      expect(events.find((e) => e.event_type === 'property.created')!.payload.source).toBe('authoritative_location');
      // A redirect at the authoritative location is refused: the file is judged invalid.
      web.set('b.pub.test', ADAGENTS, { body: { authoritative_location: `https://cdn.other.test:${web.port}/moved.json` } });
      web.set('cdn.other.test', '/moved.json', { location: `https://cdn.other.test:{port}/net/adagents.json`, status: 301 });
      await crawl('b.pub.test');
      const [pub] = await db().query<{ adagents_valid: boolean }>(sql`SELECT adagents_valid FROM registry_publishers WHERE domain = 'b.pub.test'`);
      expect(pub!.adagents_valid).toBe(false);
      await newEvents();
    });

    test('ads.txt MANAGERDOMAIN fallback when adagents.json is missing', async () => {
      web.set('c.pub.test', '/ads.txt', { type: 'text/plain', body: 'exchange.test, 123, DIRECT\nMANAGERDOMAIN=manager.other.test\n' });
      web.set('manager.other.test', ADAGENTS, { body: adagents('c.pub.test') });
      await crawl('c.pub.test');
      const events = await newEvents();
      const created = events.find((e) => e.event_type === 'property.created')!;
      expect(created.payload.source).toBe('ads_txt_managerdomain');
      const [pub] = await db().query<{ adagents_valid: boolean; source: string }>(
        sql`SELECT adagents_valid, source FROM registry_publishers WHERE domain = 'c.pub.test'`,
      );
      expect(pub).toEqual({ adagents_valid: true, source: 'ads_txt_managerdomain' });
    });

    test('oversized or mistyped files are invalid verdicts (not crashes, not retries); a missing file for an unknown domain creates nothing', async () => {
      web.set('d.pub.test', ADAGENTS, { body: 'x'.repeat(100), type: 'text/html' });
      await crawl('d.pub.test');
      const [d] = await db().query<{ adagents_valid: boolean; validation_errors: Array<{ message: string }> }>(
        sql`SELECT adagents_valid, validation_errors FROM registry_publishers WHERE domain = 'd.pub.test'`,
      );
      expect(d!.adagents_valid).toBe(false);
      expect(d!.validation_errors[0]!.message).toContain('bad_content_type');
      await crawl('nothing.pub.test');
      const none = await db().query(sql`SELECT 1 FROM registry_publishers WHERE domain = 'nothing.pub.test'`);
      expect(none).toHaveLength(0);
      const [job] = await db().query<{ status: string; result: any }>(sql`SELECT status, result FROM crawl_jobs WHERE domain = 'nothing.pub.test'`);
      expect(job!.status).toBe('done');
      expect(job!.result.adagents).toBe('missing');
      await newEvents();
    });

    test('brand.json is fetched, validated and projected for the operator side', async () => {
      web.set('pub.test', '/.well-known/brand.json', {
        body: {
          version: '1.0',
          house: { domain: 'pub.test', name: 'Pub House', architecture: 'branded_house' },
          brands: [{ id: 'pub', names: [{ en_US: 'Pub' }], keller_type: 'master', properties: [{ type: 'website', identifier: 'pub.test' }] }],
        },
      });
      await crawl('pub.test');
      const [op] = await db().query<{ brand_json_valid: boolean; house_name: string }>(
        sql`SELECT brand_json_valid, house_name FROM registry_operators WHERE domain = 'pub.test'`,
      );
      expect(op).toEqual({ brand_json_valid: true, house_name: 'Pub House' });
      const props = await db().query<{ identifier: string }>(sql`SELECT identifier FROM registry_operator_properties WHERE operator_domain = 'pub.test'`);
      expect(props.map((p) => p.identifier)).toEqual(['pub.test']);
      await newEvents();
    });

    test('crawled files become the authoritative brand and property records: resolve serves them, saves answer 409', async () => {
      const brand = (await (await a().fetch('/api/brands/resolve?domain=pub.test')).json()) as any;
      expect(brand).toMatchObject({ canonical_domain: 'pub.test', brand_name: 'Pub', source: 'brand_json', keller_type: 'master' });
      const raw = (await (await a().fetch('/api/brands/brand-json?domain=pub.test')).json()) as any;
      expect(raw.data.house.name).toBe('Pub House');
      const props = (await (await a().fetch('/api/properties/resolve?domain=pub.test')).json()) as any;
      expect(props).toMatchObject({ publisher_domain: 'pub.test', source: 'adagents_json', verified: true });
      expect(props.properties.map((p: any) => p.id)).toEqual(['home']);
      const { key } = await newKey(a().deployment);
      expect((await a().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'pub.test', brand_name: 'Hijack' } })).status).toBe(409);
      expect(
        (await a().fetch('/api/properties/save', { method: 'POST', token: key, json: { publisher_domain: 'pub.test', authorized_agents: [] } })).status,
      ).toBe(409);
      expect(await newEvents()).toEqual([]); // recording the files adds no events of its own
    });

    test('5xx is retried with doubling backoff up to max attempts, then the job fails', async () => {
      web.set('e.pub.test', ADAGENTS, { status: 503, body: 'busy', type: 'text/plain' });
      const { id } = await enqueueCrawl(db(), deps(), { domain: 'e.pub.test', reason: 'cli' });
      expect(await runCrawlBatch(deps(), 'w', 4)).toBe(1);
      const job = async () =>
        (
          await db().query<{ status: string; attempts: number; run_after: string }>(
            sql`SELECT status, attempts, run_after FROM crawl_jobs WHERE id = ${id}::uuid`,
          )
        )[0]!;
      let j = await job();
      expect(j.status).toBe('queued');
      expect(new Date(j.run_after).getTime() - clock().now().getTime()).toBe(60_000);
      expect(await runCrawlBatch(deps(), 'w', 4)).toBe(0);
      clock().advance(60_000);
      expect(await runCrawlBatch(deps(), 'w', 4)).toBe(1);
      j = await job();
      expect(new Date(j.run_after).getTime() - clock().now().getTime()).toBe(120_000);
      clock().advance(120_000);
      expect(await runCrawlBatch(deps(), 'w', 4)).toBe(1);
      j = await job();
      expect(j.status).toBe('failed');
      expect(j.attempts).toBe(3);
    });

    test('a job whose worker dies is retried after its lease; the dead worker cannot complete it', async () => {
      web.set('f.pub.test', ADAGENTS, { body: adagents('f.pub.test') });
      await enqueueCrawl(db(), deps(), { domain: 'f.pub.test', reason: 'cli' });
      const [claimed] = await claimJobs(db(), deps(), 'doomed-worker', 1);
      expect(claimed!.domain).toBe('f.pub.test');
      // The doomed worker never finishes. Before the lease runs out nobody else gets the job.
      expect(await runCrawlBatch(deps(), 'survivor', 4)).toBe(0);
      clock().advance(121_000);
      expect(await runCrawlBatch(deps(), 'survivor', 4)).toBe(1);
      const [row] = await db().query<{ status: string; attempts: number; worker: string }>(
        sql`SELECT status, attempts, worker FROM crawl_jobs WHERE id = ${claimed!.id}::uuid`,
      );
      expect(row).toEqual({ status: 'done', attempts: 2, worker: 'survivor' });
      expect(await completeJob(db(), deps(), claimed!, { late: true })).toBe(false);
      await newEvents();
    });

    test(`two workers on one database never process one job twice${adapter === 'pglite' ? ' (PGlite: one connection, claims interleave)' : ''}`, async () => {
      const domains = Array.from({ length: 24 }, (_, i) => `w${i}.pub.test`);
      for (const d of domains) web.set(d, ADAGENTS, { body: adagents(d) });
      for (const d of domains) await enqueueCrawl(db(), deps(), { domain: d, reason: 'cli' });
      const processed: Array<[string, string]> = [];
      const work = async (name: string) => {
        while ((await runCrawlBatch(deps(), name, 3, (domain) => processed.push([name, domain]))) > 0);
      };
      await Promise.all([work('worker-1'), work('worker-2')]);
      const seen = processed.map(([, d]) => d).sort();
      expect(seen).toEqual([...domains].sort());
      const rows = await db().query<{ attempts: number; status: string }>(sql`SELECT attempts, status FROM crawl_jobs WHERE domain = ANY(${domains}::text[])`);
      expect(rows.every((r) => r.attempts === 1 && r.status === 'done')).toBe(true);
      // Each property was created once (a double crawl would show no duplicate row, but a second property.created could not happen either).
      const created = (await newEvents()).filter((e) => e.event_type === 'property.created');
      expect(created).toHaveLength(domains.length);
    });

    test('scheduled re-crawl: nothing is due before the TTL, every known publisher after it', async () => {
      expect(await scheduleDue(db(), deps())).toEqual([]);
      clock().advance(3_600_001);
      const queued = await scheduleDue(db(), deps());
      expect(queued).toContain('pub.test');
      expect(queued).toContain('w0.pub.test');
      // Pushed one TTL ahead at once: a second scheduler run queues nothing.
      expect(await scheduleDue(db(), deps())).toEqual([]);
      web.set('e.pub.test', ADAGENTS, { body: adagents('e.pub.test') });
      while ((await runCrawlBatch(deps(), 'sched', 8)) > 0);
      const open = await db().query(sql`SELECT 1 FROM crawl_jobs WHERE status IN ('queued', 'running')`);
      expect(open).toHaveLength(0);
    });

    test('crawl-request validation: 401, bad domain, private address -> 400', async () => {
      const post = (json: unknown, token: string | undefined = TOKEN) => a().fetch('/api/registry/crawl-request', { method: 'POST', token, json });
      expect((await a().fetch('/api/registry/crawl-request', { method: 'POST', json: { domain: 'pub.test' } })).status).toBe(401);
      for (const domain of ['', 'not a domain', 'localhost', '127.0.0.1', '-bad-.test', 'x'.repeat(400)]) expect((await post({ domain })).status).toBe(400);
      expect((await post({})).status).toBe(400);
      const privateHost = await post({ domain: 'intranet.pub.test' });
      expect(privateHost.status).toBe(400);
      expect(((await privateHost.json()) as any).message).toContain('10.1.2.3');
      expect((await post({ domain: 'unknown-name.example' })).status).toBe(400);
    });

    test('crawl-request limits hold across two instances: one per domain per 5 minutes', async () => {
      clock().advance(300_000);
      const first = await a().fetch('/api/registry/crawl-request', { method: 'POST', token: TOKEN, json: { domain: 'g.pub.test' } });
      expect(first.status).toBe(202);
      const second = await get().b.fetch('/api/registry/crawl-request', { method: 'POST', token: `${TOKEN}-second`, json: { domain: 'g.pub.test' } });
      expect(second.status).toBe(429);
      const body = (await second.json()) as { error: string; retry_after: number };
      expect(body.error).toBe('rate_limited');
      expect(body.retry_after).toBeGreaterThan(0);
      expect(body.retry_after).toBeLessThanOrEqual(300);
      expect(second.headers.get('retry-after')).toBe(String(body.retry_after));
    });

    test('crawl-request limits hold across two instances: 30 per hour per user', async () => {
      const hourStart = Math.ceil(clock().now().getTime() / 3_600_000) * 3_600_000;
      clock().set(new Date(hourStart));
      const statuses: number[] = [];
      for (let i = 0; i < 31; i++) {
        const server = i % 2 === 0 ? a() : get().b;
        const res = await server.fetch('/api/registry/crawl-request', { method: 'POST', token: TOKEN, json: { domain: `u${i}.pub.test` } });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 30).every((s) => s === 202)).toBe(true);
      expect(statuses[30]).toBe(429);
      // Another user is not affected.
      expect((await get().b.fetch('/api/registry/crawl-request', { method: 'POST', token: `${TOKEN}-second`, json: { domain: 'u99.pub.test' } })).status).toBe(
        202,
      );
    });
  },
);

beforeAll(() => {
  // Compile the JSON schemas once up front (a few hundred ms) so no test carries that cost.
  validator.adagents({});
});
