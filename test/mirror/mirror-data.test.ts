import { afterAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { assemble, type Deployment } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { EventLog } from '../../core/ports/events.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryCrawl, { enqueueCrawl, runCrawlBatch, workerDeps } from '../../plugins/registry-crawl/index.ts';
import { authorizationId } from '../../plugins/registry-crawl/events.ts';
import registryMirror, { FeedFollower } from '../../plugins/registry-mirror/index.ts';
import auth from '../../plugins/auth/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { dropSchema, forEachDatabase, storagePlugin, uniqueSchema } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { TEST_CERT, loopbackResolver, startPublisherWeb } from '../support/loopback.ts';

// A registry crawls real files served on loopback; a second instance follows its feed and
// rebuilds publishers, properties, agents and authorizations from the event payloads.
const TOKEN = 'mirror-data-token-0123456789';
const ADAGENTS = '/.well-known/adagents.json';
const web = startPublisherWeb();
afterAll(() => web.stop());

const property = (id: string, name: string, host: string, tags: string[] = []) => ({
  property_id: id,
  property_type: 'website',
  name,
  identifiers: [{ type: 'domain', value: host }],
  tags,
});
const v1 = {
  authorized_agents: [
    {
      url: 'https://sales.agent.test/mcp',
      authorized_for: 'All display',
      authorization_type: 'property_ids',
      property_ids: ['home', 'news'],
      delegation_type: 'direct',
    },
    {
      url: 'https://resale.agent.test',
      authorized_for: 'News only',
      authorization_type: 'property_tags',
      property_tags: ['news'],
      delegation_type: 'delegated',
    },
  ],
  properties: [property('home', 'Home', 'pub.test'), property('news', 'News', 'news.pub.test', ['news'])],
};
const v2 = {
  authorized_agents: [
    {
      url: 'https://sales.agent.test/mcp',
      authorized_for: 'Display and video',
      authorization_type: 'property_ids',
      property_ids: ['home', 'news', 'sport'],
      delegation_type: 'direct',
    },
  ],
  properties: [
    property('home', 'Home', 'pub.test'),
    property('news', 'News & Politics', 'news.pub.test', ['news']),
    property('sport', 'Sport', 'sport.pub.test'),
  ],
};

async function mirrorInstance(adapter: 'pglite' | 'postgres', schema: string, from: string): Promise<{ deployment: Deployment; follower: FeedFollower }> {
  const preset = definePreset({
    name: 'mirror-data',
    plugins: [
      await storagePlugin(adapter, schema),
      auth(),
      registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
      registryMirror({ from, key: TOKEN, pageSize: 3, follow: false }),
    ],
  });
  const deployment = await assemble(preset, { env: { LOG_LEVEL: 'silent' } });
  await deployment.start();
  const follower = new FeedFollower(
    deployment.get(Database),
    deployment.get(EventLog),
    { from, key: TOKEN, pageSize: 3, listings: [], timeoutMs: 5000 },
    deployment.logger,
  );
  return { deployment, follower };
}

/** The upstream's registry data in the mirror's shape, and which properties never had a payload with name and publisher. */
async function upstreamData(db: DatabasePort) {
  const publishers = await db.query(sql`SELECT id::text AS publisher_id, domain, adagents_valid FROM registry_publishers WHERE has_adagents ORDER BY id`);
  const properties = await db.query<Record<string, unknown> & { property_rid: string }>(sql`
    SELECT p.id::text AS property_rid, pub.domain AS publisher_domain, p.property_type, p.name, p.identifiers, p.status
    FROM registry_properties p JOIN registry_publishers pub ON pub.id = p.publisher_id ORDER BY p.id`);
  const createdOnly = new Set(
    (
      await db.query<{ id: string }>(sql`
      SELECT entity_id::text AS id FROM registry_events WHERE entity_type = 'property' GROUP BY entity_id
      HAVING bool_and(event_type = 'property.created')`)
    ).map((r) => r.id),
  );
  const agents = await db.query(sql`SELECT id::text AS agent_id, url AS agent_url FROM registry_agents ORDER BY id`);
  const authorizations = await db.query<{ agent_id: string; property_rid: string }>(sql`
    SELECT z.agent_id::text, a.url AS agent_url, z.property_id::text AS property_rid, pub.domain AS publisher_domain, z.delegation_type, z.authorized_for
    FROM registry_authorizations z JOIN registry_agents a ON a.id = z.agent_id JOIN registry_publishers pub ON pub.id = z.publisher_id
    ORDER BY z.agent_id, z.property_id`);
  return {
    publishers,
    // A property only ever created has carried its type, identifiers and status, not its name or publisher.
    properties: properties.map((p) => (createdOnly.has(p.property_rid) ? { ...p, publisher_domain: null, name: null } : p)),
    agents,
    authorizations: authorizations.map((a) => ({ authorization_id: authorizationId(a), ...a })),
  };
}

async function mirroredData(db: DatabasePort) {
  return {
    publishers: await db.query(sql`SELECT publisher_id::text, domain, adagents_valid FROM mirror_publishers ORDER BY publisher_id`),
    properties: await db.query(
      sql`SELECT property_rid::text, publisher_domain, property_type, name, identifiers, status FROM mirror_properties ORDER BY property_rid`,
    ),
    agents: await db.query(sql`SELECT agent_id::text, agent_url FROM mirror_agents WHERE listed ORDER BY agent_id`),
    authorizations: await db.query(sql`
      SELECT authorization_id::text, agent_id::text, agent_url, property_rid::text, publisher_domain, delegation_type, authorized_for
      FROM mirror_authorizations WHERE active ORDER BY agent_id, property_rid`),
  };
}

forEachDatabase(
  'mirror rebuilds registry data from the feed',
  async (adapter, schema) => {
    const crawlOptions = { workers: 0, scheduleIntervalMs: 0, origin: web.origin };
    const upstream = await startServer(adapter, schema, [
      crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test']), ca: TEST_CERT }),
      registryAgents(),
      registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
      rateLimit({ pruneIntervalMs: 0 }),
      auth({ testTokens: [{ token: TOKEN, name: 'mirror' }] }),
      registryCrawl(crawlOptions),
      restHost(),
    ]);
    const mirrorSchema = uniqueSchema('mirror_data');
    const mirror = await mirrorInstance(adapter, mirrorSchema, upstream.base);
    return { upstream, mirror, mirrorSchema, adapter, deps: workerDeps(upstream.deployment, crawlOptions) };
  },
  async ({ upstream, mirror, mirrorSchema, adapter }) => {
    await mirror.deployment.stop();
    await upstream.close();
    await dropSchema(adapter, mirrorSchema);
  },
  (get) => {
    const up = (): TestServer => get().upstream;
    const mdb = () => get().mirror.deployment.get(Database);
    async function crawl(body: unknown) {
      web.set('pub.test', ADAGENTS, { body });
      await enqueueCrawl(up().deployment.get(Database), get().deps, { domain: 'pub.test', reason: 'cli' });
      while ((await runCrawlBatch(get().deps, 'test-worker', 4)) > 0);
      await get().mirror.follower.catchUp();
    }
    const same = async () => expect(await mirroredData(mdb())).toEqual(await upstreamData(up().deployment.get(Database)));

    test('first crawl: publisher, two properties (type, identifiers, status), two agents, three authorizations', async () => {
      await crawl(v1);
      const data = await mirroredData(mdb());
      expect(data.properties).toHaveLength(2);
      expect(data.authorizations).toHaveLength(3);
      await same();
    });

    test('a changed file: renamed property, new property, revoked agent, modified authorizations', async () => {
      await crawl(v2);
      const news = (await mirroredData(mdb())).properties.find((p: any) => p.name === 'News & Politics') as any;
      expect(news.publisher_domain).toBe('pub.test');
      await same();
    });

    test('broken file: properties stale and the publisher invalid', async () => {
      await crawl({ authorized_agents: 'nope' });
      expect(new Set((await mirroredData(mdb())).properties.map((p: any) => p.status))).toEqual(new Set(['stale']));
      await same();
    });

    test('a re-bootstrap (410) replays the feed from the start without moving any row back', async () => {
      await mdb().query(sql`UPDATE mirror_state SET cursor = ${defaultIds.uuid7()}::uuid`);
      expect((await get().mirror.follower.step()).bootstrapped).toBe(true);
      // The first replayed page holds the original property.created events (status active):
      // older than what the rows already reflect, so nothing changes.
      expect((await get().mirror.follower.step()).received).toBe(3);
      await same();
      await get().mirror.follower.catchUp();
      const [state] = await mdb().query<{ bootstraps: number }>(sql`SELECT bootstraps FROM mirror_state`);
      expect(state!.bootstraps).toBe(1);
      await same();
    });

    test('fixed file: active again', async () => {
      await crawl(v2);
      expect(new Set((await mirroredData(mdb())).properties.map((p: any) => p.status))).toEqual(new Set(['active']));
      await same();
    });
  },
);
