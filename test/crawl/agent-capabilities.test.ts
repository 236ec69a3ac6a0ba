import { afterAll, beforeAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { ManualClock, Clock } from '../../core/ports/clock.ts';
import { Database } from '../../core/ports/database.ts';
import type { FeedEvent } from '../../core/ports/events.ts';
import type { Json } from '../../core/task.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryCrawl, { runCrawlBatch, scheduleAgentChecks, workerDeps } from '../../plugins/registry-crawl/index.ts';
import auth from '../../plugins/auth/index.ts';
import restHost from '../../hosts/rest/index.ts';
import signalsPreset from '../../config/signals-agent.ts';
import { dropSchema, forEachDatabase, uniqueSchema } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { TEST_CERT, loopbackResolver } from '../support/loopback.ts';
import { startTlsFront } from '../support/tls-front.ts';
import { newKey } from '../support/principals.ts';
import { stubAgentPlugins } from '../fixtures/stub-agent.ts';

// Real agents on loopback behind a TLS front, all speaking the `adcp` namespace so the crawl has
// to ask for get_adcp_capabilities (config.protocol.namespace):
// - measure.pub.test: MCP agent declaring a measurement metric catalog (changed by the tests);
// - measure-a2a.pub.test: A2A-only agent with its own catalog;
// - signals.pub.test: the signals-agent preset (signals capabilities over MCP);
// - measure-private.pub.test: the MCP measurement agent again, enrolled as a private agent;
// - broken.pub.test answers 404 to everything; slow.pub.test never answers in time.
const TOKEN = 'agent-capabilities-test-token-0123';
const NS = { PROTOCOL_NAMESPACE: 'adcp' };
const front = startTlsFront();
const initialMetrics = () => [
  {
    metric_id: 'attention_seconds',
    standard_reference: 'https://standards.example/attention',
    accreditations: [{ accrediting_body: 'MRC', certification_id: 'mrc-42' }],
  },
  { metric_id: 'viewable_rate' },
];
const measurement: Json = { metrics: initialMetrics() };
const agentSchemas = { measure: uniqueSchema('caps_measure'), a2a: uniqueSchema('caps_a2a'), signals: uniqueSchema('caps_signals') };
const upstream: TestServer[] = [];

beforeAll(async () => {
  const env = (name: string) => ({ env: { ...NS, PUBLIC_URL: front.url(name) } });
  const measure = await startServer(
    'pglite',
    agentSchemas.measure,
    stubAgentPlugins({ hosts: ['mcp'], capabilities: [{ protocol: 'measurement', block: { measurement } }] }),
    env('measure.pub.test'),
  );
  const a2a = await startServer(
    'pglite',
    agentSchemas.a2a,
    stubAgentPlugins({
      hosts: ['a2a'],
      capabilities: [
        { protocol: 'measurement', block: { measurement: { metrics: [{ metric_id: 'brand_lift', accreditations: [{ accrediting_body: 'ARF' }] }] } } },
      ],
    }),
    env('measure-a2a.pub.test'),
  );
  const signals = await startServer('pglite', agentSchemas.signals, signalsPreset.plugins.slice(1), env('signals.pub.test'));
  upstream.push(measure, a2a, signals);
  front.route('measure.pub.test', measure.base);
  front.route('measure-private.pub.test', measure.base);
  front.route('measure-a2a.pub.test', a2a.base);
  front.route('signals.pub.test', signals.base);
  front.route('broken.pub.test', () => new Response('not here', { status: 404, headers: { 'content-type': 'text/plain' } }));
  front.route('slow.pub.test', async () => {
    await Bun.sleep(4000);
    return new Response('late', { status: 200 });
  });
});
afterAll(async () => {
  for (const s of upstream) await s.close();
  front.stop();
  for (const s of Object.values(agentSchemas)) await dropSchema('pglite', s);
});

const AGENTS = {
  measure: { url: front.url('measure.pub.test', '/mcp'), name: 'Measure (MCP)', type: 'measurement', protocol: 'mcp' },
  a2a: { url: front.url('measure-a2a.pub.test'), name: 'Measure (A2A)', type: 'measurement', protocol: 'a2a' },
  signals: { url: front.url('signals.pub.test', '/mcp'), name: 'Signals', type: 'signals', protocol: 'mcp' },
  private: { url: front.url('measure-private.pub.test', '/mcp'), name: 'Measure (private)', type: 'measurement', protocol: 'mcp', visibility: 'private' },
  broken: { url: front.url('broken.pub.test', '/mcp'), name: 'Broken', type: 'measurement', protocol: 'mcp' },
  slow: { url: front.url('slow.pub.test', '/mcp'), name: 'Slow', type: 'measurement', protocol: 'mcp' },
} as const;

forEachDatabase(
  'agent capability crawl',
  async (adapter, schema) => {
    // Each adapter's run starts from the catalog the agent first declares.
    measurement.metrics = initialMetrics();
    const clock = new ManualClock(new Date('2026-04-01T00:00:00Z'));
    const crawlOptions = { workers: 0, scheduleIntervalMs: 0, agentTtlSeconds: 3600, agentTimeoutMs: 1500, maxAttempts: 1 };
    const app = await startServer(
      adapter,
      schema,
      [
        crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test']), ca: TEST_CERT }),
        registryAgents(),
        registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
        rateLimit({ pruneIntervalMs: 0 }),
        auth({ testTokens: [{ token: TOKEN, name: 'feed-reader' }] }),
        registryCrawl(crawlOptions),
        restHost(),
      ],
      { overrides: [[Clock, clock]], env: NS },
    );
    const owner = await newKey(app.deployment, 'member');
    return { app, clock, owner, deps: workerDeps(app.deployment, crawlOptions) };
  },
  async ({ app }) => app.close(),
  (get) => {
    const app = () => get().app;
    const db = () => app().deployment.get(Database);
    let cursor: string | undefined;
    async function newEvents(): Promise<FeedEvent[]> {
      const res = await app().fetch(`/api/registry/feed?limit=10000&types=agent.*${cursor ? `&cursor=${cursor}` : ''}`, { token: TOKEN });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { events: FeedEvent[]; cursor: string | null };
      cursor = body.cursor ?? cursor;
      return body.events;
    }
    /** One scheduler pass, then run every queued job; returns the agent URLs queued. */
    async function refresh(): Promise<string[]> {
      const queued = await scheduleAgentChecks(db(), get().deps);
      while ((await runCrawlBatch(get().deps, 'test-worker', 8)) > 0);
      return queued;
    }
    const catalog = async (query: string, token?: string) => {
      const res = await app().fetch(`/api/registry/agents?${query}`, { token });
      expect(res.status).toBe(200);
      return ((await res.json()) as { agents: any[] }).agents;
    };
    const target = async (url: string) =>
      (
        await db().query<{ last_outcome: string; last_error: string | null; consecutive_failures: number }>(sql`
        SELECT last_outcome, last_error, consecutive_failures FROM crawl_agent_targets WHERE agent_url = ${url}::text`)
      )[0];
    const jobsOf = async (url: string) =>
      db().query<{ status: string; kind: string; attempts: number }>(
        sql`SELECT status, kind, attempts FROM crawl_jobs WHERE domain = ${url}::text ORDER BY created_at`,
      );

    test('enrolled agents without capabilities are due: one agent_capabilities job each, a second pass queues none', async () => {
      for (const agent of Object.values(AGENTS)) {
        const res = await app().fetch('/api/registry/agents', { method: 'POST', token: get().owner.key, json: agent });
        expect(res.status).toBe(201);
      }
      await newEvents(); // enrollment events are not what this suite is about
      const queued = await scheduleAgentChecks(db(), get().deps);
      expect(queued.sort()).toEqual(
        Object.values(AGENTS)
          .map((a) => a.url)
          .sort(),
      );
      expect(await scheduleAgentChecks(db(), get().deps)).toEqual([]);
      const [job] = await jobsOf(AGENTS.measure.url);
      expect(job).toMatchObject({ status: 'queued', kind: 'agent_capabilities' });
    });

    test('the crawl records the metric catalogs (MCP and A2A) and the catalog filters find them', async () => {
      while ((await runCrawlBatch(get().deps, 'test-worker', 8)) > 0);
      const byMetric = await catalog(`capabilities=true&type=measurement&metric_id=attention_seconds`);
      expect(byMetric.map((a) => a.url)).toEqual([AGENTS.measure.url]);
      const caps = byMetric[0].capabilities;
      expect(caps.measurement.metrics).toEqual([
        {
          metric_id: 'attention_seconds',
          standard_reference: 'https://standards.example/attention',
          accreditations: [{ accrediting_body: 'MRC', certification_id: 'mrc-42', verified_by_aao: false }],
        },
        { metric_id: 'viewable_rate', accreditations: [] },
      ]);
      expect(caps.crawled_at).toBe('2026-04-01T00:00:00.000Z');
      expect((await catalog('capabilities=true&metric_id=brand_lift')).map((a) => a.url)).toEqual([AGENTS.a2a.url]);
      expect((await catalog('accreditation=ARF')).map((a) => a.url)).toEqual([AGENTS.a2a.url]);
      expect((await catalog('q=VIEWABLE')).map((a) => a.url)).toEqual([AGENTS.measure.url]);
      // The private agent is crawled too, but only its owner sees it.
      expect((await catalog('metric_id=attention_seconds', get().owner.key)).map((a) => a.url).sort()).toEqual([AGENTS.measure.url, AGENTS.private.url].sort());
    });

    test('signals capabilities of the signals-agent preset are recorded', async () => {
      const [signals] = await catalog('capabilities=true&type=signals');
      expect(signals.url).toBe(AGENTS.signals.url);
      expect(signals.capabilities.signals_capabilities.discovery_modes).toEqual(['brief']);
      expect(signals.capabilities.signals_capabilities.data_provider_domains.length).toBeGreaterThan(0);
      expect(signals.capabilities.creative_capabilities).toBeNull();
    });

    test('each change is one agent.profile_updated in the feed; the private agent emits none', async () => {
      const events = (await newEvents()).filter((e) => e.event_type === 'agent.profile_updated');
      const byUrl = new Map(events.map((e) => [e.payload.agent_url as string, e]));
      expect([...byUrl.keys()].sort()).toEqual([AGENTS.measure.url, AGENTS.a2a.url, AGENTS.signals.url].sort());
      expect(events.length).toBe(3);
      const measure = byUrl.get(AGENTS.measure.url)!;
      expect(measure.actor).toBe('crawler');
      expect(measure.payload).toMatchObject({ change: 'capabilities', changed: ['metrics'] });
      expect((measure.payload.capabilities as any).metrics.map((m: any) => m.metric_id)).toEqual(['attention_seconds', 'viewable_rate']);
      expect(byUrl.get(AGENTS.signals.url)!.payload.changed).toEqual(['signals_capabilities']);
    });

    test('failures are recorded, not fatal: a 404 agent is an error verdict, a timeout fails after its attempts', async () => {
      const broken = await target(AGENTS.broken.url);
      expect(broken).toMatchObject({ last_outcome: 'error', consecutive_failures: 1 });
      expect(broken!.last_error).toContain('get_adcp_capabilities');
      expect((await jobsOf(AGENTS.broken.url)).map((j) => j.status)).toEqual(['done']);
      const slow = await target(AGENTS.slow.url);
      expect(slow).toMatchObject({ last_outcome: 'failed', consecutive_failures: 1 });
      expect(slow!.last_error).toContain('timeout');
      expect((await jobsOf(AGENTS.slow.url)).map((j) => j.status)).toEqual(['failed']);
      expect(await target(AGENTS.measure.url)).toMatchObject({ last_outcome: 'updated', last_error: null, consecutive_failures: 0 });
      const [broken_] = await catalog('capabilities=true&type=measurement', get().owner.key).then((all) => all.filter((a) => a.url === AGENTS.broken.url));
      expect(broken_.capabilities.crawled_at).toBeNull();
    });

    test('within the TTL nothing is due; after it, an unchanged catalog refreshes crawled_at without an event', async () => {
      get().clock.advance(1800_000);
      expect(await refresh()).toEqual([]);
      get().clock.advance(1801_000);
      const queued = await refresh();
      expect(queued.sort()).toEqual(
        Object.values(AGENTS)
          .map((a) => a.url)
          .sort(),
      );
      expect((await newEvents()).filter((e) => e.event_type === 'agent.profile_updated')).toEqual([]);
      const [measure] = await catalog('capabilities=true&metric_id=attention_seconds');
      expect(measure.capabilities.crawled_at).toBe('2026-04-01T01:00:01.000Z');
      expect(await target(AGENTS.measure.url)).toMatchObject({ last_outcome: 'unchanged' });
      expect((await target(AGENTS.broken.url))!.consecutive_failures).toBe(2);
    });

    test('when the agent changes its catalog, the next crawl stores it and emits the change', async () => {
      (measurement.metrics as any[]).push({ metric_id: 'carbon_grams', accreditations: [{ accrediting_body: 'GARM' }] });
      (measurement.metrics as any[]).splice(1, 1); // viewable_rate withdrawn
      get().clock.advance(3600_000);
      await refresh();
      const events = (await newEvents()).filter((e) => e.event_type === 'agent.profile_updated');
      expect(events.map((e) => e.payload.agent_url)).toEqual([AGENTS.measure.url]);
      expect(events[0]!.payload.changed).toEqual(['metrics']);
      expect((await catalog('metric_id=carbon_grams')).map((a) => a.url)).toEqual([AGENTS.measure.url]);
      expect(await catalog('metric_id=viewable_rate')).toEqual([]);
    });

    test('a removed agent is forgotten by the schedule', async () => {
      const res = await app().fetch(`/api/registry/agents?url=${encodeURIComponent(AGENTS.broken.url)}`, { method: 'DELETE', token: get().owner.key });
      expect([200, 204]).toContain(res.status);
      get().clock.advance(3600_000);
      const queued = await scheduleAgentChecks(db(), get().deps);
      expect(queued).not.toContain(AGENTS.broken.url);
      expect(await target(AGENTS.broken.url)).toBeUndefined();
      while ((await runCrawlBatch(get().deps, 'test-worker', 8)) > 0);
    });
  },
);
