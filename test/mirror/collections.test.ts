import { afterAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { assemble, type Deployment } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { EventLog } from '../../core/ports/events.ts';
import { Database } from '../../core/ports/database.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryCrawl, { enqueueCrawl, runCrawlBatch, workerDeps } from '../../plugins/registry-crawl/index.ts';
import registryMirror, { FeedFollower } from '../../plugins/registry-mirror/index.ts';
import auth from '../../plugins/auth/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { dropSchema, forEachDatabase, storagePlugin, uniqueSchema } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { TEST_CERT, loopbackResolver, startPublisherWeb } from '../support/loopback.ts';

// Collections from adagents.json, their merges across publishers, property merges, and a mirror following them.
const TOKEN = 'collections-token-0123456789';
const ADAGENTS = '/.well-known/adagents.json';
const web = startPublisherWeb();
afterAll(() => web.stop());

const agent = { url: 'https://sales.agent.test/mcp', authorized_for: 'All', authorization_type: 'property_tags', property_tags: ['all'] };
const property = (id: string, host: string) => ({
  property_id: id,
  property_type: 'podcast',
  name: `Show site ${id}`,
  identifiers: [{ type: 'domain', value: host }],
  tags: ['all'],
});
const show = (id: string, name: string, guid: string, extra: Record<string, unknown> = {}) => ({
  collection_id: id,
  name,
  kind: 'series',
  distribution: [{ publisher_domain: 'pub.test', identifiers: [{ type: 'podcast_guid', value: guid }] }],
  ...extra,
});

const pubV1 = {
  authorized_agents: [agent],
  properties: [property('home', 'pub.test')],
  collections: [show('morning', 'Morning Show', 'guid-morning'), show('night', 'Night Show', 'guid-night')],
};
// The same morning show, distributed by another publisher under its own id.
const other = {
  authorized_agents: [agent],
  properties: [property('main', 'other.pub.test')],
  collections: [show('am-show', 'The Morning Show', 'GUID-MORNING')],
};
// pub.test renames its property id (same identifiers), updates one show and drops the other.
const pubV2 = {
  authorized_agents: [agent],
  properties: [property('homepage', 'pub.test')],
  collections: [show('morning', 'Morning Show', 'guid-morning', { description: 'Weekdays at 7' })],
};

forEachDatabase(
  'collections and merges',
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
    const mirrorSchema = uniqueSchema('mirror_coll');
    const deployment: Deployment = await assemble(
      definePreset({
        name: 'mirror-collections',
        plugins: [
          await storagePlugin(adapter, mirrorSchema),
          auth(),
          registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
          registryMirror({ from: upstream.base, key: TOKEN, follow: false }),
        ],
      }),
      { env: { LOG_LEVEL: 'silent' } },
    );
    await deployment.start();
    const follower = new FeedFollower(
      deployment.get(Database),
      deployment.get(EventLog),
      { from: upstream.base, key: TOKEN, pageSize: 50, listings: [], timeoutMs: 5000 },
      deployment.logger,
    );
    return { upstream, mirror: deployment, follower, mirrorSchema, adapter, deps: workerDeps(upstream.deployment, crawlOptions) };
  },
  async ({ upstream, mirror, mirrorSchema, adapter }) => {
    await mirror.stop();
    await upstream.close();
    await dropSchema(adapter, mirrorSchema);
  },
  (get) => {
    const up = (): TestServer => get().upstream;
    let cursor: string | null = null;
    async function crawl(domain: string, body: unknown): Promise<string[]> {
      web.set(domain, ADAGENTS, { body });
      await enqueueCrawl(up().deployment.get(Database), get().deps, { domain, reason: 'cli' });
      while ((await runCrawlBatch(get().deps, 'test-worker', 4)) > 0);
      const page: any = await (
        await up().fetch(`/api/registry/feed?types=collection.*,property.merged${cursor ? `&cursor=${cursor}` : ''}`, { token: TOKEN })
      ).json();
      cursor = page.cursor ?? cursor;
      return page.events.map((e: any) => `${e.event_type} ${e.payload.collection_id ?? e.payload.publisher_domain}`);
    }
    const listing = async (query = '') => ((await (await up().fetch(`/api/registry/collections${query}`)).json()) as any).collections;
    const mirrored = async () => {
      await get().follower.catchUp();
      return get()
        .mirror.get(Database)
        .query<Record<string, any>>(
          sql`SELECT collection_rid::text, collection_id, publisher_domain, name, status, merged_into::text FROM mirror_collections ORDER BY collection_rid`,
        );
    };
    const upstreamRows = () =>
      up()
        .deployment.get(Database)
        .query<Record<string, any>>(sql`
          SELECT c.id::text AS collection_rid, c.collection_id, pub.domain AS publisher_domain, c.name, c.status, c.merged_into::text
          FROM registry_collections c JOIN registry_publishers pub ON pub.id = c.publisher_id ORDER BY c.id`);

    test('collections are created from adagents.json with their distribution identifiers', async () => {
      expect((await crawl('pub.test', pubV1)).sort()).toEqual(['collection.created morning', 'collection.created night']);
      const rows = await listing('?publisher_domain=pub.test');
      expect(rows.map((c: any) => [c.collection_id, c.name, c.kind, c.status])).toEqual([
        ['morning', 'Morning Show', 'series', 'active'],
        ['night', 'Night Show', 'series', 'active'],
      ]);
      expect(rows[0].distribution).toEqual([{ publisher_domain: 'pub.test', identifiers: [{ type: 'podcast_guid', value: 'guid-morning' }] }]);
      expect(await mirrored()).toEqual(await upstreamRows());
    });

    test("another publisher's record of the same show (distribution identifiers overlap) is merged into the first", async () => {
      expect(await crawl('other.pub.test', other)).toEqual(['collection.created am-show', 'collection.merged other.pub.test']);
      const merged = (await listing('?status=merged'))[0];
      const morning = (await listing('?publisher_domain=pub.test')).find((c: any) => c.collection_id === 'morning');
      expect(merged).toMatchObject({ collection_id: 'am-show', publisher_domain: 'other.pub.test', merged_into: morning.collection_rid });
      const feed: any = await (await up().fetch('/api/registry/feed?types=collection.merged', { token: TOKEN })).json();
      expect(feed.events[0].payload).toMatchObject({ merged_into: morning.collection_rid, identifiers: [{ type: 'podcast_guid', value: 'guid-morning' }] });
      expect(await mirrored()).toEqual(await upstreamRows());
    });

    test('updates, removals, and a property re-published under another id (same identifiers) merged into the new record', async () => {
      expect((await crawl('pub.test', pubV2)).sort()).toEqual(['collection.removed night', 'collection.updated morning', 'property.merged pub.test']);
      expect((await listing('?status=removed')).map((c: any) => c.collection_id)).toEqual(['night']);
      const props = await up()
        .deployment.get(Database)
        .query<{ property_id: string; status: string; merged_into: string | null; id: string }>(sql`
          SELECT p.id::text, p.property_id, p.status, p.merged_into::text FROM registry_properties p JOIN registry_publishers pub ON pub.id = p.publisher_id
          WHERE pub.domain = 'pub.test' ORDER BY p.property_id`);
      const home = props.find((p) => p.property_id === 'home')!;
      const homepage = props.find((p) => p.property_id === 'homepage')!;
      expect(home).toMatchObject({ status: 'merged', merged_into: homepage.id });
      expect(homepage.status).toBe('active');
      // The merged record is not offered any more: lookups find the new one.
      const lookup: any = await (await up().fetch('/api/registry/lookup/property?type=domain&value=pub.test')).json();
      expect(lookup.agents.map((a: any) => a.property.property_rid)).toEqual([homepage.id]);
      expect(await mirrored()).toEqual(await upstreamRows());
      const [mirroredHome] = await get()
        .mirror.get(Database)
        .query<{ status: string; merged_into: string }>(sql`SELECT status, merged_into::text FROM mirror_properties WHERE property_rid = ${home.id}::uuid`);
      expect(mirroredHome).toEqual({ status: 'merged', merged_into: homepage.id });
      // Crawling the same file again changes nothing.
      expect(await crawl('pub.test', pubV2)).toEqual([]);
    });
  },
);
