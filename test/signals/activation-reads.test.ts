import { expect, test } from 'bun:test';
import { sql, type SqlFragment } from '../../core/sql.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { ActivationReads } from '../../plugins/signals/activation-reads.ts';
import { forEachDatabase } from '../support/db.ts';
import { startSignalsServer, type SignalsServer } from '../agents/fixture.ts';

// get_signals reads the caller's activations (and, on Postgres, the catalog version) for every
// answer. On Postgres one query serves every request waiting at once, and a request never joins a
// query that started before it arrived; on a local database (PGlite) the activations are kept in
// memory, current through the writers' announcements.

const PRINCIPAL = 'test:activation-reads';
const SIGNAL = 'sig_auto_intenders_suv';

/** The batch query of ActivationReads, told apart from every other statement. */
const isBatch = (statement: SqlFragment) => statement.build().text.includes('jsonb_array_elements(');

/** A Database port counting batch queries; while `hold` is set, a batch query's answer waits for `release` after the database ran it. */
function gated(inner: DatabasePort) {
  const state = { batches: 0, hold: false, release: () => {}, ran: () => {} };
  let released = Promise.resolve();
  let ran: Promise<void> = Promise.resolve();
  const db: DatabasePort = {
    ...inner,
    kind: inner.kind,
    local: inner.local,
    async query<T>(statement: SqlFragment) {
      if (!isBatch(statement)) return inner.query<T>(statement);
      state.batches++;
      const rows = await inner.query<T>(statement);
      if (state.hold) {
        state.hold = false;
        state.ran();
        await released;
      }
      return rows;
    },
    transaction: (fn) => inner.transaction(fn),
    listen: (channel, handler, onReconnect) => inner.listen(channel, handler, onReconnect),
  };
  const holdNext = () => {
    state.hold = true;
    released = new Promise((resolve) => (state.release = resolve));
    ran = new Promise((resolve) => (state.ran = resolve));
    return { ran: () => ran, release: () => state.release() };
  };
  return { db, state, holdNext };
}

async function activate(db: DatabasePort, destination: string): Promise<void> {
  await db.query(sql`
    INSERT INTO signal_activations (id, signal_id, principal_id, destination_key, destination, status, estimated_minutes, ready_at, created_at)
    VALUES (${crypto.randomUUID()}::uuid, ${SIGNAL}::text, ${PRINCIPAL}::text, ${destination}::text, '{"type":"platform","platform":"x"}'::jsonb,
            'pending', 5, now(), now())`);
}

forEachDatabase<SignalsServer>(
  'activation reads',
  (adapter, schema) => startSignalsServer(adapter, schema),
  (s) => s.server.close(),
  (get, adapter) => {
    // Each database has its own way; the other's test is not registered for it.
    if (adapter === 'postgres')
      test('Postgres: concurrent reads share one query; a read arriving while a query runs waits for the next one and sees what committed meanwhile', async () => {
        const inner = get().server.deployment.get(Database);
        expect(inner.local).toBe(false);
        const { db, state, holdNext } = gated(inner);
        const reads = new ActivationReads(db);

        const answers = await Promise.all(Array.from({ length: 20 }, () => reads.read(PRINCIPAL, [SIGNAL])));
        expect(state.batches).toBe(1);
        for (const a of answers) expect(a).toEqual({ version: expect.any(String), activations: [] });

        // The first read's query has run (and found nothing); an activation commits; then a second read arrives.
        const held = holdNext();
        const first = reads.read(PRINCIPAL, [SIGNAL]);
        await held.ran();
        await activate(inner, 'platform:reads-postgres');
        const second = reads.read(PRINCIPAL, [SIGNAL]);
        held.release();
        expect((await first).activations).toEqual([]);
        expect((await second).activations.map((a) => a.destination_key)).toEqual(['platform:reads-postgres']);
        expect(state.batches).toBe(3);
      });

    if (adapter === 'pglite')
      test('PGlite: activations come from memory, current through the announcement the writer makes in its transaction', async () => {
        const inner = get().server.deployment.get(Database);
        expect(inner.local).toBe(true);
        const { db, state } = gated(inner);
        const reads = new ActivationReads(db);
        const unfollow = await reads.follow(get().server.deployment.logger);
        try {
          expect(await reads.read(PRINCIPAL, [SIGNAL])).toEqual({ version: null, activations: [] });
          await inner.transaction(async (tx) => {
            await activate(tx as DatabasePort, 'platform:reads-local');
            await reads.changed(tx, PRINCIPAL);
          });
          const after = await reads.read(PRINCIPAL, [SIGNAL]);
          expect(after.activations.map((a) => a.destination_key)).toEqual(['platform:reads-local']);
          // Answered from the copy: no batch query, and the copy read the principal's rows once per change.
          expect(state.batches).toBe(0);
          expect((await reads.read(PRINCIPAL, [SIGNAL])).activations).toHaveLength(1);
        } finally {
          await unfollow();
        }
      });
  },
);
