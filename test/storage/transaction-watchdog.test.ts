import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { DatabasePort } from '../../core/ports/database.ts';
import { sql } from '../../core/sql.ts';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { DATABASE_URL, skipPostgresUnlessConfigured } from '../support/db.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const TITLE = 'Postgres transaction watchdog';
skipPostgresUnlessConfigured(TITLE);

// A transaction is abandoned when it makes no progress for the patience (statement timeout + 1 s),
// never merely for lasting longer than that while its statements complete. (Abandoning a stalled one
// is covered by postgres-outage.test.ts.)
const target = DATABASE_URL;
if (target) {
  describe(`${TITLE} [postgres]`, () => {
    let proxy: TcpProxy;
    let db: DatabasePort;
    beforeAll(async () => {
      const upstream = new URL(target);
      proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
      const url = new URL(target);
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      // Patience 1.3 s: configuration, not a sleep.
      db = createPostgresDatabase({ url: url.href, max: 2, statementTimeoutMs: 300 });
    });
    afterAll(async () => {
      await db.close();
      await proxy.close();
    });

    test('a transaction longer than the patience commits while its statements keep completing', async () => {
      const n = await db.transaction(async (tx) => {
        let done = 0;
        for (let i = 0; i < 6; i++) {
          await tx.query(sql`SELECT pg_sleep(0.25)`);
          done++;
        }
        return done;
      });
      expect(n).toBe(6);
    });

    // postgres.js schedules a write for later and throws from that timer if the socket has gone by
    // then: a ROLLBACK sent on a connection being dropped crashed the process with an uncaught TypeError.
    test('transactions abandoned on a black-holed network write nothing more on their connections; once it is back, transactions run again', async () => {
      await proxy.setMode('blackhole');
      const abandoned = await Promise.all(
        [1, 2, 3].map((i) =>
          db
            .transaction((tx) => tx.query(sql`SELECT ${i}::int`))
            .then(
              () => 'committed',
              (e: Error) => e.name,
            ),
        ),
      );
      expect(abandoned).toEqual(['DatabaseUnavailableError', 'DatabaseUnavailableError', 'DatabaseUnavailableError']);
      await proxy.setMode('forward'); // resets the stalled connections
      for (let i = 0; i < 3; i++) expect(await db.transaction((tx) => tx.query<{ n: number }>(sql`SELECT 5 AS n`))).toEqual([{ n: 5 }]);
    });
  });
}
