import { afterAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { DatabasePort } from '../../core/ports/database.ts';
import auth from '../../plugins/auth/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import searchPostgres, { createPostgresSearch } from '../../plugins/search-postgres/index.ts';
import { DATABASE_URL, dropSchema, openDatabase, uniqueSchema } from '../support/db.ts';
import { deploy } from '../support/deploy.ts';
import { expectedDocuments, indexedDocuments, outboxRows } from '../support/search-index.ts';

// An OS-level crash between the commit and the index write: a child process commits a write over
// HTTP and is killed with SIGKILL while its drain is inside the index write. The next instance on the
// same database must leave the index equal to the database. Postgres only: an in-memory PGlite dies
// with its process, so there is nothing to restart on.

const CHILD = join(import.meta.dir, 'fixtures', 'outbox-kill-child.ts');

/** Read the child's stdout until every marker was printed (or it exits). */
async function waitFor(stream: ReadableStream<Uint8Array>, markers: string[]): Promise<string> {
  const decoder = new TextDecoder();
  let seen = '';
  for await (const chunk of stream) {
    seen += decoder.decode(chunk, { stream: true });
    if (markers.every((m) => seen.includes(m))) return seen;
  }
  return seen;
}

if (!DATABASE_URL) {
  describe('search outbox under SIGKILL [postgres]', () => {
    test.skip('skipped: DATABASE_URL is not set (.ci/run sets it); an in-memory PGlite cannot outlive a killed process', () => {});
  });
} else {
  describe('search outbox under SIGKILL [postgres]', () => {
    const schema = uniqueSchema('outbox_kill');
    let db: DatabasePort;
    afterAll(async () => {
      await db?.close();
      await dropSchema('postgres', schema);
    });

    test('a process killed after the commit, inside the index write: the next instance leaves the index equal to the database', async () => {
      const child = Bun.spawn(['bun', CHILD], { env: { ...process.env, OUTBOX_SCHEMA: schema, LOG_LEVEL: 'silent' }, stdout: 'pipe', stderr: 'inherit' });
      const said = await waitFor(child.stdout, ['COMMITTED', 'DRAINING']);
      child.kill('SIGKILL');
      expect(await child.exited).not.toBe(0);
      expect(said).toContain('COMMITTED 201');
      expect(said).toContain('DRAINING');

      db = await openDatabase('postgres', schema, 2);
      const search = createPostgresSearch(db);
      // The write committed; the index never got it.
      const want = await expectedDocuments(db);
      expect(want.map((d) => d.agent_url)).toContain('https://enrolled.example/mcp');
      expect((await indexedDocuments(search)).map((d) => d.agent_url)).not.toContain('https://enrolled.example/mcp');
      expect(await outboxRows(db)).toBeGreaterThan(0);

      const next = await deploy('postgres', [auth(), searchPostgres(), registryAgents()], { schema });
      expect(await outboxRows(db)).toBe(0);
      expect(await indexedDocuments(search)).toEqual(want);
      await next.close();
    });
  });
}
