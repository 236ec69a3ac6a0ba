import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql, type SqlFragment } from '../../core/sql.ts';
import type { DatabasePort, Migration } from '../../core/ports/database.ts';

export interface DatabaseSubject {
  port: DatabasePort;
  /** A second instance on the same database and schema (another process starting together). */
  another(): Promise<{ port: DatabasePort; close(): Promise<void> }>;
  close(): Promise<void>;
}

/** The database port contract (core/ports/database.ts), run once per adapter. */
export function databaseContract(name: string, make: () => Promise<DatabaseSubject>): void {
  describe(`database contract: ${name}`, () => {
    let subject: DatabaseSubject;
    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await subject?.close();
    });
    const db = (): DatabasePort => subject.port;

    test('binds parameters of every common type and never interpolates them', async () => {
      const evil = "'; DROP TABLE x; --";
      const [row] = await db().query<any>(
        sql`SELECT ${evil}::text AS s, ${42}::int AS i, ${true}::boolean AS b, ${['a', 'b']}::text[] AS arr,
                   ${{ k: [1, 2] }}::jsonb AS j, ${[{ a: 1 }]}::jsonb AS ja, ${new Date(0)}::timestamptz AS d, ${null}::text AS n`,
      );
      expect(row.s).toBe(evil);
      expect(row.i).toBe(42);
      expect(row.b).toBe(true);
      expect(row.arr).toEqual(['a', 'b']);
      expect(row.j).toEqual({ k: [1, 2] });
      expect(row.ja).toEqual([{ a: 1 }]);
      expect(new Date(row.d).getTime()).toBe(0);
      expect(row.n).toBeNull();
    });

    test('nested fragments, join and raw compose into one numbered statement', async () => {
      const where = sql.join([sql`x > ${1}`, sql`x < ${5}`], ' AND ');
      const rows = await db().query<{ x: number }>(sql`SELECT x FROM generate_series(${0}::int, ${9}::int) AS x WHERE ${where} ORDER BY x ${sql.raw('DESC')}`);
      expect(rows.map((r) => r.x)).toEqual([4, 3, 2]);
    });

    test('transaction commits on success and rolls back when the callback throws', async () => {
      await db().query(sql`CREATE TABLE IF NOT EXISTS tx_test (id int PRIMARY KEY, v text)`);
      await db().transaction(async (tx) => {
        await tx.query(sql`INSERT INTO tx_test VALUES (${1}, ${'kept'})`);
      });
      const boom = new Error('boom');
      await expect(
        db().transaction(async (tx) => {
          await tx.query(sql`INSERT INTO tx_test VALUES (${2}, ${'lost'})`);
          throw boom;
        }),
      ).rejects.toBe(boom);
      const rows = await db().query<{ id: number }>(sql`SELECT id FROM tx_test ORDER BY id`);
      expect(rows.map((r) => r.id)).toEqual([1]);
    });

    test('a failing statement inside a transaction rolls back its earlier writes', async () => {
      await db().query(sql`CREATE TABLE IF NOT EXISTS tx_fail (id int PRIMARY KEY)`);
      await expect(
        db().transaction(async (tx) => {
          await tx.query(sql`INSERT INTO tx_fail VALUES (${1})`);
          await tx.query(sql`INSERT INTO tx_fail VALUES (${1})`); // duplicate key
        }),
      ).rejects.toThrow();
      expect(await db().query(sql`SELECT * FROM tx_fail`)).toEqual([]);
    });

    test('a statement left in flight when the callback resolves commits with the transaction, or fails it whole', async () => {
      await db().query(sql`CREATE TABLE IF NOT EXISTS tx_last (id int PRIMARY KEY)`);
      let last!: Promise<unknown>;
      await db().transaction(async (tx) => {
        await tx.query(sql`INSERT INTO tx_last VALUES (${1})`);
        last = tx.query(sql`INSERT INTO tx_last VALUES (${2})`); // not awaited: COMMIT goes behind it
      });
      await last;
      expect((await db().query<{ id: number }>(sql`SELECT id FROM tx_last ORDER BY id`)).map((r) => r.id)).toEqual([1, 2]);
      const failed = db().transaction(async (tx) => {
        await tx.query(sql`INSERT INTO tx_last VALUES (${3})`);
        last = tx.query(sql`INSERT INTO tx_last VALUES (${1})`); // duplicate key, not awaited
        last.catch(() => {});
        return 'answered';
      });
      await expect(failed).rejects.toThrow();
      await expect(last).rejects.toThrow();
      expect((await db().query<{ id: number }>(sql`SELECT id FROM tx_last ORDER BY id`)).map((r) => r.id)).toEqual([1, 2]);
    });

    test('a statement issued after the callback returned is refused, not run outside the transaction; the connection serves the next one clean', async () => {
      await db().query(sql`CREATE TABLE IF NOT EXISTS tx_late (id int PRIMARY KEY)`);
      let chain!: Promise<unknown>;
      await db().transaction(async (tx) => {
        // A write chained behind another, not waited for: its second statement comes after the callback returned.
        chain = tx.query(sql`INSERT INTO tx_late VALUES (${1})`).then(() => tx.query(sql`INSERT INTO tx_late VALUES (${2})`));
        chain.catch(() => {});
      });
      await expect(chain).rejects.toThrow(/after its transaction's function had returned/);
      // Every connection of the pool is still usable and outside any transaction.
      for (let i = 0; i < 4; i++) {
        await db().transaction(async (tx) => {
          await tx.query(sql`INSERT INTO tx_late VALUES (${10 + i})`);
        });
      }
      expect((await db().query<{ id: number }>(sql`SELECT id FROM tx_late ORDER BY id`)).map((r) => r.id)).toEqual([1, 10, 11, 12, 13]);
    });

    test('concurrent transactions incrementing one row lose no update', async () => {
      await db().query(sql`CREATE TABLE IF NOT EXISTS counter (id int PRIMARY KEY, n int NOT NULL)`);
      await db().query(sql`INSERT INTO counter VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET n = 0`);
      await Promise.all(
        Array.from({ length: 25 }, () =>
          db().transaction(async (tx) => {
            const [row] = await tx.query<{ n: number }>(sql`SELECT n FROM counter WHERE id = 1 FOR UPDATE`);
            await tx.query(sql`UPDATE counter SET n = ${row!.n + 1} WHERE id = 1`);
          }),
        ),
      );
      const [row] = await db().query<{ n: number }>(sql`SELECT n FROM counter WHERE id = 1`);
      expect(row!.n).toBe(25);
    });

    test('migrations apply once, in order, and re-running is a no-op', async () => {
      const migrations: Migration[] = [
        { version: 2, name: 'add_col', sql: 'ALTER TABLE mig_t ADD COLUMN extra text; INSERT INTO mig_log VALUES (2);' },
        { version: 1, name: 'create', sql: 'CREATE TABLE mig_t (id int); CREATE TABLE mig_log (v int); INSERT INTO mig_log VALUES (1);' },
      ];
      await db().migrate('contract', migrations);
      await db().migrate('contract', migrations);
      const log = await db().query<{ v: number }>(sql`SELECT v FROM mig_log ORDER BY v`);
      expect(log.map((r) => r.v)).toEqual([1, 2]);
      const applied = await db().query<{ version: number }>(sql`SELECT version FROM schema_migrations WHERE owner = 'contract' ORDER BY version`);
      expect(applied.map((r) => r.version)).toEqual([1, 2]);
    });

    test('a failing migration applies nothing of its batch', async () => {
      const bad: Migration[] = [
        { version: 1, name: 'ok', sql: 'CREATE TABLE bad_ok (id int);' },
        { version: 2, name: 'broken', sql: 'CREATE TABLE bad_ok (id int);' },
      ];
      await expect(db().migrate('broken-owner', bad)).rejects.toThrow();
      const applied = await db().query(sql`SELECT version FROM schema_migrations WHERE owner = 'broken-owner'`);
      expect(applied).toEqual([]);
    });

    test('concurrent migrators (two instances starting together) apply each version once', async () => {
      const other = await subject.another();
      const migrations: Migration[] = [
        { version: 1, name: 'create', sql: 'CREATE TABLE conc_log (v int); INSERT INTO conc_log VALUES (1);' },
        { version: 2, name: 'more', sql: 'INSERT INTO conc_log VALUES (2);' },
      ];
      await Promise.all([db().migrate('concurrent', migrations), other.port.migrate('concurrent', migrations), db().migrate('concurrent', migrations)]);
      await other.close();
      const log = await db().query<{ v: number }>(sql`SELECT v FROM conc_log ORDER BY v`);
      expect(log.map((r) => r.v)).toEqual([1, 2]);
    });

    test('rejects duplicate migration versions before touching the database', async () => {
      await expect(
        db().migrate('dup', [
          { version: 1, name: 'a', sql: 'SELECT 1' },
          { version: 1, name: 'b', sql: 'SELECT 1' },
        ]),
      ).rejects.toThrow(/version 1 appears twice/);
    });

    test('a statement that cannot be built rejects on the pool and in a transaction (failing it), never throws', async () => {
      const broken = {
        build() {
          throw new Error('cannot build');
        },
      } as unknown as SqlFragment;
      let pool: Promise<unknown> | undefined;
      expect(() => {
        pool = db().query(broken);
      }).not.toThrow();
      await expect(pool!).rejects.toThrow('cannot build');
      let thrown: unknown;
      const inTx = db().transaction(async (tx) => {
        let pending: Promise<unknown>;
        try {
          pending = tx.query(broken);
        } catch (error) {
          thrown = error;
          throw error;
        }
        return pending;
      });
      await expect(inTx).rejects.toThrow('cannot build');
      expect(thrown).toBeUndefined();
    });

    test('ping answers', async () => {
      await db().ping();
    });

    test('NOTIFY reaches listeners on commit only', async () => {
      const db = subject.port;
      const seen: string[] = [];
      const channel = `contract_${process.pid}`;
      const stop = await db.listen(channel, (p) => seen.push(p));
      await expect(
        db.transaction(async (tx) => {
          await tx.query(sql`SELECT pg_notify(${channel}::text, ${'rolled-back'}::text)`);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      await db.transaction(async (tx) => {
        await tx.query(sql`SELECT pg_notify(${channel}::text, ${'committed'}::text)`);
      });
      // Delivery is asynchronous (another connection): wait for the event, bounded.
      for (let i = 0; i < 100 && seen.length === 0; i++) await Bun.sleep(20);
      expect(seen).toEqual(['committed']);
      await stop();
    });

    test('a local database delivers a NOTIFY before the writing call returns (what `local` promises)', async () => {
      const db = subject.port;
      const seen: string[] = [];
      const channel = `contract_local_${process.pid}`;
      const stop = await db.listen(channel, (p) => seen.push(p));
      await db.transaction(async (tx) => {
        await tx.query(sql`SELECT pg_notify(${channel}::text, ${'in-transaction'}::text)`);
      });
      const afterTransaction = [...seen];
      await db.query(sql`SELECT pg_notify(${channel}::text, ${'autocommit'}::text)`);
      const afterStatement = [...seen];
      await stop();
      // A shared database promises nothing about timing, so it must not claim `local`.
      if (!db.local) return expect(db.kind).toBe('postgres');
      expect(afterTransaction).toEqual(['in-transaction']);
      expect(afterStatement).toEqual(['in-transaction', 'autocommit']);
    });
  });
}
