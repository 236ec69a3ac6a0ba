import { expect, test } from 'bun:test';
import { Crawler } from '../../core/ports/crawler.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { offlineCrawler, REGISTRY_TOKENS, registryPlugins } from '../support/registry.ts';

const { member: OWNER, other: MEMBER, public: PUBLIC_TIER, admin: ADMIN } = REGISTRY_TOKENS;
const agent = (slug: string, visibility: string) => ({ url: `https://${slug}.agents.example/mcp`, name: slug, type: 'sales', visibility });

type FeedEvent = { event_type: string; payload: { agent_url: string }; actor: string; visibility?: string };

/**
 * The feed shows an agent's events to exactly those the catalog shows the agent to: public to
 * every key, members_only to member and admin keys, private to the owning organization. (Before,
 * any key read agent.profile_updated of members_only agents and agent.removed of private ones.)
 */
forEachDatabase<TestServer>(
  'feed visibility',
  async (adapter, schema) => {
    const s = await startServer(adapter, schema, registryPlugins(), { overrides: [[Crawler, offlineCrawler]] });
    for (const [slug, visibility] of [
      ['open', 'public'],
      ['club', 'members_only'],
      ['secret', 'private'],
      ['gone', 'private'],
    ] as const) {
      const res = await s.fetch('/api/registry/agents', { method: 'POST', token: OWNER, json: agent(slug, visibility) });
      expect(res.status).toBe(201);
    }
    const removed = await s.fetch(`/api/registry/agents?url=${encodeURIComponent(agent('gone', '').url)}`, { method: 'DELETE', token: OWNER });
    expect(removed.status).toBe(200);
    return s;
  },
  (s) => s.close(),
  (get) => {
    const feed = async (token: string) => {
      const res = await get().fetch('/api/registry/feed?types=agent.*&limit=1000', { token });
      expect(res.status).toBe(200);
      return ((await res.json()) as { events: FeedEvent[] }).events.map((e) => `${e.event_type} ${new URL(e.payload.agent_url).hostname.split('.')[0]}`);
    };

    test('a public-tier key reads only public agents’ events', async () => {
      expect(await feed(PUBLIC_TIER)).toEqual(['agent.profile_updated open']);
    });

    test('another member reads public and members_only events, never another organization’s private ones', async () => {
      expect(await feed(MEMBER)).toEqual(['agent.profile_updated open', 'agent.profile_updated club']);
      expect(await feed(ADMIN)).toEqual(['agent.profile_updated open', 'agent.profile_updated club']);
    });

    test('the owner reads every event of its agents, the removal of a private one included', async () => {
      expect(await feed(OWNER)).toEqual([
        'agent.profile_updated open',
        'agent.profile_updated club',
        'agent.profile_updated secret',
        'agent.profile_updated gone',
        'agent.removed gone',
      ]);
    });

    test('restricted events carry their visibility (a mirror keeps them restricted); the owner id is never served', async () => {
      const res = await get().fetch('/api/registry/feed?types=agent.*&limit=1000', { token: OWNER });
      const events = ((await res.json()) as { events: Array<FeedEvent & Record<string, unknown>> }).events;
      expect(events.map((e) => e.visibility ?? 'public')).toEqual(['public', 'members_only', 'private', 'private', 'private']);
      expect(events.every((e) => !('owner_org_id' in e))).toBe(true);
    });
  },
);
