import { expect, test } from 'bun:test';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import { PublisherCatalog } from '../../core/ports/publisher-catalog.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import governanceLists from '../../plugins/governance-lists/index.ts';
import restHost from '../../hosts/rest/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { T0 } from './fixture.ts';
import { ACME, key, NOVA, TOKEN } from './lists-fixture.ts';

// Lists resolved through the registry (registry-agents' PublisherCatalog): publisher tags and
// property ids, identifiers the registry knows, and the filters judged on its data.
const ADAGENTS = {
  authorized_agents: [{ url: 'https://sales.example/mcp', authorized_for: 'all', authorization_type: 'property_tags', property_tags: ['outdoor'] }],
  properties: [
    {
      property_id: 'trail_site',
      property_type: 'website',
      name: 'Trails',
      identifiers: [{ type: 'domain', value: 'trails.example' }],
      tags: ['outdoor'],
      supported_channels: ['display'],
    },
    {
      property_id: 'trail_app',
      property_type: 'mobile_app',
      name: 'Trails app',
      identifiers: [{ type: 'ios_bundle', value: 'com.trails.app' }],
      tags: ['outdoor'],
      supported_channels: ['display'],
    },
    {
      property_id: 'news_site',
      property_type: 'website',
      name: 'News',
      identifiers: [{ type: 'domain', value: 'news.example' }],
      tags: ['news'],
      supported_channels: ['olv'],
    },
  ],
  collections: [
    {
      collection_id: 'hike_show',
      name: 'Hike Show',
      kind: 'series',
      genre: ['Outdoors'],
      genre_taxonomy: 'custom',
      content_rating: { system: 'tv_parental', rating: 'TV-G' },
      production_quality: 'professional',
      distribution: [{ identifiers: [{ type: 'imdb_id', value: 'tt0000001' }] }],
    },
    {
      collection_id: 'late_talk',
      name: 'Late Talk',
      kind: 'series',
      genre: ['comedy'],
      content_rating: { system: 'tv_parental', rating: 'TV-MA' },
      distribution: [{ identifiers: [{ type: 'imdb_id', value: 'tt0000002' }] }],
    },
  ],
};

forEachDatabase<TestServer>(
  'governance lists registry',
  async (adapter, schema) => {
    const clock = new ManualClock(T0);
    const server = await startServer(
      adapter,
      schema,
      [
        auth({ testTokens: [{ token: TOKEN, name: 'buyer' }] }),
        tasks({ worker: false }),
        idempotency(),
        registryAgents({ healthIntervalMs: 0 }),
        governanceLists(),
        restHost(),
        restTasks(),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' }, overrides: [[Clock, clock]] },
    );
    await server.deployment.get(Discovery).projectAdagents('outdoorpub.example', ADAGENTS, { valid: true, now: T0 });
    return server;
  },
  (s) => s.close(),
  (get) => {
    test('the catalog port answers active records by tags, ids and identifiers (case-insensitive)', async () => {
      const catalog = get().deployment.get(PublisherCatalog);
      expect((await catalog.propertiesByTags('OutdoorPub.example', ['outdoor'], 10)).map((p) => p.property_id)).toEqual(['trail_app', 'trail_site']);
      expect((await catalog.propertiesByIds('outdoorpub.example', ['news_site'], 10)).map((p) => p.channels)).toEqual([['olv']]);
      expect((await catalog.propertiesByIdentifiers([{ type: 'domain', value: 'TRAILS.example' }], 10)).map((p) => p.property_type)).toEqual(['website']);
      expect(await catalog.propertiesByTags('unknown.example', ['outdoor'], 10)).toEqual([]);
      const [hike] = await catalog.collectionsByDistributionIds([{ type: 'imdb_id', value: 'TT0000001' }], 10);
      expect(hike).toMatchObject({
        collection_id: 'hike_show',
        kind: 'series',
        genres: ['Outdoors'],
        content_rating: { system: 'tv_parental', rating: 'TV-G' },
        production_quality: 'professional',
        distribution_ids: [{ type: 'imdb_id', value: 'tt0000001' }],
      });
      expect((await catalog.collectionsByGenres('outdoorpub.example', ['COMEDY'], 10)).map((c) => c.collection_id)).toEqual(['late_talk']);
      expect((await catalog.collectionsByIds('outdoorpub.example', ['hike_show', 'nope'], 10)).map((c) => c.name)).toEqual(['Hike Show']);
    });

    test('property lists expand publisher tags and ids and apply property_types and channels_any', async () => {
      const c = restClient(get(), TOKEN);
      const create = async (body: Record<string, unknown>) => (await c.call('create_property_list', { account: ACME, idempotency_key: key(), ...body })).body;
      const get_ = async (listId: string) => {
        const r = await c.call('get_property_list', { list_id: listId });
        expect(bothVersionsErrors('property/get-property-list-response.json', r.body)).toEqual([]);
        return r.body;
      };
      const tagged = await create({
        name: 'Outdoor',
        base_properties: [{ selection_type: 'publisher_tags', publisher_domain: 'outdoorpub.example', tags: ['outdoor'] }],
      });
      expect(tagged.list.property_count).toBe(2);
      expect((await get_(tagged.list.list_id)).identifiers).toEqual([
        { type: 'ios_bundle', value: 'com.trails.app' },
        { type: 'domain', value: 'trails.example' },
      ]);

      const websites = await create({
        name: 'Websites on display',
        base_properties: [
          { selection_type: 'publisher_ids', publisher_domain: 'outdoorpub.example', property_ids: ['trail_site', 'trail_app', 'news_site'] },
          { selection_type: 'identifiers', identifiers: [{ type: 'domain', value: 'unknown.example' }] },
        ],
        filters: { property_types: ['website'], channels_any: ['display'] },
      });
      const got = await get_(websites.list.list_id);
      // trail_app is not a website, news_site not on display; unknown.example cannot be judged: kept, reported.
      expect(got.identifiers).toEqual([
        { type: 'domain', value: 'trails.example' },
        { type: 'domain', value: 'unknown.example' },
      ]);
      expect(got.coverage_gaps).toEqual({
        property_types: [{ type: 'domain', value: 'unknown.example' }],
        channels_any: [{ type: 'domain', value: 'unknown.example' }],
      });

      const validated = await c.call('validate_property_delivery', {
        list_id: tagged.list.list_id,
        records: [
          { identifier: { type: 'domain', value: 'www.trails.example' }, impressions: 10 },
          { identifier: { type: 'domain', value: 'news.example' }, impressions: 5 },
        ],
      });
      expect(validated.body).toMatchObject({ compliant: false, summary: { compliant_records: 1, non_compliant_records: 1 } });
    });

    test('collection lists resolve publisher collections, genres and known distribution ids, with their filters', async () => {
      const c = restClient(get(), TOKEN);
      const created = await c.call('create_collection_list', {
        account: NOVA,
        name: 'Family programs',
        base_collections: [
          { selection_type: 'publisher_genres', publisher_domain: 'outdoorpub.example', genres: ['outdoors', 'comedy'], genre_taxonomy: 'custom' },
          { selection_type: 'distribution_ids', identifiers: [{ type: 'imdb_id', value: 'tt0000001' }] },
        ],
        filters: { content_ratings_exclude: [{ system: 'tv_parental', rating: 'TV-MA' }], production_quality: ['professional'] },
        idempotency_key: key(),
      });
      const got = await c.call('get_collection_list', { list_id: created.body.list.list_id });
      expect(bothVersionsErrors('collection/get-collection-list-response.json', got.body)).toEqual([]);
      expect(got.body.collections).toEqual([
        {
          collection_rid: expect.any(String),
          name: 'Hike Show',
          distribution_ids: [{ type: 'imdb_id', value: 'tt0000001' }],
          content_rating: { system: 'tv_parental', rating: 'TV-G' },
          genre: ['Outdoors'],
          genre_taxonomy: 'custom',
          kind: 'series',
        },
      ]);
      expect(got.body.coverage_gaps).toBeUndefined();
    });
  },
);
