import { afterAll, describe, expect, test } from 'bun:test';
import type { DatabasePort } from '../../core/ports/database.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import { Search, type SearchPort } from '../../core/ports/search.ts';
import { SearchSync } from '../../core/ports/search-sync.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import restHost from '../../hosts/rest/index.ts';
import auth from '../../plugins/auth/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import searchPostgres, { createPostgresSearch } from '../../plugins/search-postgres/index.ts';
import { adapterNames, dropSchema, openDatabase, skipPostgresUnlessConfigured, uniqueSchema, type AdapterName } from '../support/db.ts';
import { deploy, type Deployed } from '../support/deploy.ts';
import { adagentsFile as adagents, OUTBOX_TOKEN as TOKEN } from './fixtures/outbox-documents.ts';
import { expectedDocuments as expected, indexedDocuments as indexed, outboxRows } from '../support/search-index.ts';

// The search index is fed through an outbox written in the writer's transaction: a write that
// committed is never lost by the index, whatever happens between the commit and the index write.

/** A Search adapter whose document writes fail while `failures.left > 0` (stamp reads and writes still work). */
function faulty(inner: SearchPort, failures: { left: number; calls: number }): SearchPort {
  const gate = () => {
    failures.calls++;
    if (failures.left-- > 0) throw new Error('search index unavailable (test)');
  };
  return {
    ...inner,
    async upsert(docs, tx) {
      gate();
      await inner.upsert(docs, tx);
    },
    async remove(urls, tx) {
      gate();
      await inner.remove(urls, tx);
    },
  };
}

function plugins(options: { serve?: boolean } = {}) {
  const registry = [auth({ testTokens: [{ token: TOKEN, name: 'Org', tier: 'member' }] }), searchPostgres(), registryAgents()];
  return options.serve ? [...registry, restHost()] : registry;
}

function suite(adapter: AdapterName) {
  describe(`search outbox [${adapter}]`, () => {
    const schema = uniqueSchema('search_outbox');
    const clock = new ManualClock(new Date('2026-03-01T00:00:00Z'));
    const open: Deployed[] = [];
    let db: DatabasePort;
    let search: SearchPort;
    const start = async (options: { faulty?: { left: number; calls: number }; serve?: boolean } = {}) => {
      db ??= await openDatabase(adapter, schema, 4);
      search ??= createPostgresSearch(db);
      const overrides: Array<[typeof Search, SearchPort]> = options.faulty ? [[Search, faulty(search, options.faulty)]] : [];
      const d = await deploy(adapter, plugins(options), { schema, clock, overrides, serve: options.serve });
      open.push(d);
      return d;
    };
    const crash = async (d: Deployed) => {
      await d.close();
      open.splice(open.indexOf(d), 1);
    };
    afterAll(async () => {
      for (const d of open) await d.close();
      await db?.close();
      await dropSchema(adapter, schema);
    });

    test('a write committed while the index refuses writes answers 2xx; after a restart the index matches the database', async () => {
      const failures = { left: Number.POSITIVE_INFINITY, calls: 0 };
      const a = await start({ faulty: failures, serve: true });
      const discovery = a.deployment.get(Discovery);
      await discovery.projectAdagents('pub1.example', adagents(1, ['display']), { valid: true, now: clock.now() });
      const res = await fetch(`${a.base}/api/registry/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          url: 'https://enrolled.example/mcp',
          name: 'Enrolled',
          type: 'sales',
          visibility: 'members_only',
          inventory: { channels: ['ctv'] },
        }),
      });
      expect(res.status).toBe(201);
      await a.deployment.scheduler.idle();
      // The index refused every write: nothing reached it, every change is still queued.
      expect(failures.calls).toBeGreaterThan(0);
      expect(await indexed(search)).toEqual([]);
      const status = await a.deployment.get(SearchSync).status();
      expect(status.pending).toBe(3);
      expect(status.failing).toBe(3);
      await crash(a);

      // A new deployment on the same database, later than any backoff: the queue is applied.
      clock.advance(3_600_000);
      const b = await start();
      expect(await outboxRows(db)).toBe(0);
      const want = await expected(db);
      expect(want.map((d) => d.agent_url)).toEqual(['https://enrolled.example/mcp', 'https://sales1.example/mcp', 'https://shared.example/mcp']);
      expect(await indexed(search)).toEqual(want);
      await crash(b);
    });

    test('the process stops after the commit, before the drain job ran: the next deployment applies the change', async () => {
      const a = await start();
      // No background job runs any more in this instance, but it still takes writes.
      await a.deployment.scheduler.stop();
      await a.deployment.get(Discovery).projectAdagents('pub2.example', adagents(2, ['olv']), { valid: true, now: clock.now() });
      // shared.example lost pub1 and gained pub2's channel; sales1 is no longer authorized anywhere but pub1.
      await a.deployment
        .get(Discovery)
        .projectAdagents('pub1.example', { ...adagents(1, ['display']), authorized_agents: [] }, { valid: true, now: clock.now() });
      expect(await outboxRows(db)).toBeGreaterThan(0);
      expect(await indexed(search)).not.toEqual(await expected(db));
      await crash(a);

      const b = await start();
      expect(await outboxRows(db)).toBe(0);
      const want = await expected(db);
      expect(want.map((d) => d.agent_url)).toEqual(['https://enrolled.example/mcp', 'https://sales2.example/mcp', 'https://shared.example/mcp']);
      expect(await indexed(search)).toEqual(want);
      await crash(b);
    });

    test('an index that fails the first attempts gets the change once it recovers, with backoff in between', async () => {
      const failures = { left: 2, calls: 0 };
      const a = await start({ faulty: failures });
      await a.deployment.get(Discovery).projectAdagents('pub3.example', adagents(3, ['audio']), { valid: true, now: clock.now() });
      await a.deployment.scheduler.idle();
      expect(failures.calls).toBe(1);
      // Not due yet: a poll of the job does not touch the index.
      a.timers.advance(1000);
      await a.deployment.scheduler.idle();
      expect(failures.calls).toBe(1);
      // Due after the first retry delay (1 s), then after the second (2 s): the third attempt succeeds.
      clock.advance(1000);
      a.timers.advance(1000);
      await a.deployment.scheduler.idle();
      expect(failures.calls).toBe(2);
      clock.advance(2000);
      a.timers.advance(1000);
      await a.deployment.scheduler.idle();
      expect(failures.calls).toBe(3);
      expect(await outboxRows(db)).toBe(0);
      expect(await indexed(search)).toEqual(await expected(db));
      expect((await indexed(search)).map((d) => d.agent_url)).toContain('https://sales3.example/mcp');
      await crash(a);
    });

    test('an index that lost its documents (a fresh Meilisearch on an existing database) is rebuilt at start-up', async () => {
      const want = await expected(db);
      await search.clear();
      expect(await indexed(search)).toEqual([]);
      const a = await start();
      expect(await indexed(search)).toEqual(want);
      await crash(a);
    });

    test('an index behind the watermark (a restored snapshot) is rebuilt at start-up', async () => {
      const want = await expected(db);
      const stamp = (await search.stamp())!;
      expect(stamp.version).toBeGreaterThan(0);
      // The snapshot predates the last changes: an older stamp, a document missing.
      await search.setStamp({ generation: stamp.generation, version: stamp.version - 1 });
      await search.remove(['https://sales3.example/mcp']);
      const a = await start();
      expect(await indexed(search)).toEqual(want);
      const status = await a.deployment.get(SearchSync).status();
      expect(status.stamp?.generation).not.toBe(stamp.generation);
      expect(status.stamp).toEqual(status.watermark as { generation: string; version: number });
      await crash(a);
    });

    test('two instances writing and draining at once leave the index equal to the database', async () => {
      const a = await start();
      const b = await start();
      // Every file names shared.example: both instances keep changing its profile while draining.
      await Promise.all(
        Array.from({ length: 12 }, (_, i) => {
          const d = i % 2 === 0 ? a : b;
          return d.deployment.get(Discovery).projectAdagents(`pub${10 + (i % 4)}.example`, adagents(10 + (i % 4), [['display'], ['olv'], ['ctv']][i % 3]!), {
            valid: true,
            now: clock.now(),
          });
        }),
      );
      await a.deployment.scheduler.idle();
      await b.deployment.scheduler.idle();
      // A wake that found the other instance draining waits for the next poll; drain what is left.
      await a.deployment.get(SearchSync).drain();
      expect(await outboxRows(db)).toBe(0);
      expect(await indexed(search)).toEqual(await expected(db));
      await crash(a);
      await crash(b);
    });

    test('enrolling a discovered agent as private, then removing it, moves its document out of and back into public search', async () => {
      const a = await start({ serve: true });
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${a.base}${path}`, {
          method,
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const publicUrls = async () => (await search.search({ filters: {}, limit: 200, viewer: { member: false, orgId: null } })).results.map((r) => r.agent_url);
      expect(await publicUrls()).toContain('https://shared.example/mcp');
      const enrolled = await call('POST', '/api/registry/agents', { url: 'https://shared.example/mcp', name: 'Shared', type: 'sales', visibility: 'private' });
      expect(enrolled.status).toBe(201);
      await a.deployment.scheduler.idle();
      expect(await publicUrls()).not.toContain('https://shared.example/mcp');
      expect((await call('DELETE', `/api/registry/agents?url=${encodeURIComponent('https://shared.example/mcp')}`)).status).toBe(200);
      await a.deployment.scheduler.idle();
      expect(await publicUrls()).toContain('https://shared.example/mcp');
      await crash(a);
    });

    test('SearchSync.reindex (bun run admin reindex) rebuilds the index from the database', async () => {
      const a = await start();
      await search.upsert([{ ...(await expected(db))[0]!, agent_url: 'https://stale.example', visibility: 'public', owner_org_id: null } as never]);
      const applied = await a.deployment.get(SearchSync).reindex();
      expect(applied).toBe((await expected(db)).length);
      expect(await indexed(search)).toEqual(await expected(db));
      await crash(a);
    });
  });
}

skipPostgresUnlessConfigured('search outbox');
for (const adapter of adapterNames()) suite(adapter);
