import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Database } from '../../core/ports/database.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { offlineCrawler, REGISTRY_TOKENS, registryPlugins } from '../support/registry.ts';

// Found by the fuzz suite: a read refused with 410 sequenced the staged events first, a write on a 4xx.
forEachAdapter('feed: refused reads', (adapter) => {
  test(`[${adapter}] an expired cursor is 410 before anything is sequenced; a good read then sequences`, async () => {
    // Manual timers: the background sequencer stays still, so only reads sequence.
    const d = await deploy(adapter, registryPlugins(), { serve: true, overrides: [[Crawler, offlineCrawler]] });
    try {
      const db = d.deployment.get(Database);
      const staged = async () => (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM registry_event_staging`))[0]!.n;
      const enroll = await fetch(`${d.base}/api/registry/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${REGISTRY_TOKENS.member}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://staged.example/mcp', name: 'Staged', type: 'sales' }),
      });
      expect(enroll.status).toBe(201);
      expect(await staged()).toBe(1);
      const read = (cursor?: string) =>
        fetch(`${d.base}/api/registry/feed${cursor ? `?cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${REGISTRY_TOKENS.member}` } });
      expect((await read('0195f0c0-0000-7000-8000-00000000c0de')).status).toBe(410);
      expect(await staged()).toBe(1);
      const page = (await (await read()).json()) as { events: unknown[] };
      expect(page.events).toHaveLength(1);
      expect(await staged()).toBe(0);
    } finally {
      await d.close();
    }
  });
});
