import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { importCatalog } from '../../plugins/signals/catalog.ts';
import { SignalsCatalog } from '../../plugins/signals/memory-catalog.ts';
import seed from '../../plugins/signals/seed.json';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { meanNdcg, ndcgAt } from '../support/ndcg.ts';
import { labelledSet } from '../support/relevance.ts';

// Quality of get_signals' ranking on the seed catalog, measured against hand-labelled specs
// (test/fixtures/relevance/signals.json). The Postgres ts_rank it replaced scored 0.926 on this
// set; the floor keeps the engine above it. Both storages hold the rows; the one engine ranks
// them, so both give the same rankings.

const FLOOR = 0.94;
const SET = labelledSet('signals');
/** The organization owning the seed's custom signals: it sees the whole catalog. */
const OWNER = seed.signals.find((s) => 'owner_org' in s)!.owner_org!;
const rankings = new Map<string, string[][]>();

forEachDatabase<DatabasePort>(
  'signal relevance',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema);
    await db.migrate('signals', loadMigrations(join(import.meta.dir, '../../plugins/signals/migrations')));
    await importCatalog(db, seed);
    return db;
  },
  (db) => db.close(),
  (get, adapter) => {
    test(`NDCG@10 over ${SET.length} labelled specs is at least ${FLOOR}, and every spec finds a signal it should`, async () => {
      const catalog = new SignalsCatalog(get());
      const copy = await catalog.snapshot.get();
      const rank = (spec: string) => catalog.search(copy, { orgId: OWNER, spec, limit: 10 }).rows.map((r) => r.id);
      const score = await meanNdcg(10, SET, rank);
      expect(score).toBeGreaterThanOrEqual(FLOOR);
      for (const q of SET) expect({ spec: q.query, ndcg: ndcgAt(10, rank(q.query), q.relevant) > 0 }).toEqual({ spec: q.query, ndcg: true });
      rankings.set(
        adapter,
        SET.map((q) => rank(q.query)),
      );
      const other = rankings.get(adapter === 'pglite' ? 'postgres' : 'pglite');
      if (other) expect(rankings.get(adapter)).toEqual(other);
    });
  },
);
