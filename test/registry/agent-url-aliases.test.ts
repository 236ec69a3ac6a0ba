import { expect, test } from 'bun:test';
import { Crawler } from '../../core/ports/crawler.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { offlineCrawler, REGISTRY_TOKENS, registryPlugins } from '../support/registry.ts';

const { member: OWNER, other: INTRUDER } = REGISTRY_TOKENS;

/**
 * One URL, one owner: spellings of the same resource (`//`, percent-escaped unreserved
 * characters, dot segments) are the same agent, so another organization cannot enroll an alias.
 */
forEachDatabase<TestServer>(
  'agent URL aliases',
  (adapter, schema) => startServer(adapter, schema, registryPlugins(), { overrides: [[Crawler, offlineCrawler]] }),
  (s) => s.close(),
  (get) => {
    const enroll = (token: string, url: string) => get().fetch('/api/registry/agents', { method: 'POST', token, json: { url, name: 'Agent', type: 'sales' } });

    test('another organization cannot enroll https://h/x//a or https://h/%70rivate-a over the owner’s agent', async () => {
      expect((await enroll(OWNER, 'https://h.example/x/a')).status).toBe(201);
      expect((await enroll(OWNER, 'https://h.example/private-a')).status).toBe(201);
      for (const alias of [
        'https://h.example/x//a',
        'https://H.example/x/./a/',
        'https://h.example/x/b/../a',
        'https://h.example/%70rivate-a',
        'https://h.example/%70%72ivate-a',
      ]) {
        const res = await enroll(INTRUDER, alias);
        expect({ alias, status: res.status }).toEqual({ alias, status: 409 });
      }
      // The owner reaches its agent through any spelling; the catalog keeps one entry per agent.
      expect((await enroll(OWNER, 'https://h.example/x//a')).status).toBe(200);
      const catalog = (await (await get().fetch('/api/registry/agents', { token: OWNER })).json()) as { agents: Array<{ url: string }> };
      expect(catalog.agents.map((a) => a.url).sort()).toEqual(['https://h.example/private-a', 'https://h.example/x/a']);
    });
  },
);
