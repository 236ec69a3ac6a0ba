import { expect, test } from 'bun:test';
import postgres from 'postgres';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { sql } from '../../core/sql.ts';
import { DATABASE_URL, describePostgres } from '../support/db.ts';

// Batched reads (lib/batched-read.ts) look as dear to the planner as all their callers' reads
// together; with JIT on, Postgres would compile such a statement on every run.
describePostgres('Postgres JIT', () => {
  test("the pool's connections run without JIT unless asked; asked, the server's own setting holds", async () => {
    const server = postgres(DATABASE_URL!, { max: 1, onnotice: () => {} });
    const [{ jit: serverDefault }] = (await server.unsafe('SHOW jit')) as unknown as [{ jit: string }];
    await server.end();
    for (const [jit, expected] of [
      [undefined, 'off'],
      [true, serverDefault],
    ] as const) {
      const db = createPostgresDatabase({ url: DATABASE_URL!, max: 1, ...(jit === undefined ? {} : { jit }) });
      try {
        expect((await db.query<{ jit: string }>(sql`SHOW jit`))[0]!.jit).toBe(expected);
      } finally {
        await db.close();
      }
    }
  });
});
