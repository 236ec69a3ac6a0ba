import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { importCatalog, type SearchFilters } from '../../plugins/signals/catalog.ts';
import { SignalsCatalog } from '../../plugins/signals/memory-catalog.ts';
import seed from '../../plugins/signals/seed.json';
import { forEachDatabase, openDatabase } from '../support/db.ts';

// get_signals walks a spec's matches in ranking order and stops once the page is full
// (memory-catalog.ts, orderOf). These pin that the walk gives exactly the full ranking: looked-up
// signals first, then text score, coverage, id; pages resumed from their last key add up to it.

/** The organization owning the seed's custom signals: it sees the whole catalog. */
const OWNER = seed.signals.find((s) => 'owner_org' in s)!.owner_org!;
const SPECS = ['sports fans streaming live games', 'auto intenders', 'parents shopping for family travel', 'luxury'];

forEachDatabase<DatabasePort>(
  'signal ranking walk',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema);
    await db.migrate('signals', loadMigrations(join(import.meta.dir, '../../plugins/signals/migrations')));
    await importCatalog(db, seed);
    return db;
  },
  (db) => db.close(),
  (get) => {
    test('a page is the top of the full ranking: text score, then coverage, then id', async () => {
      const catalog = new SignalsCatalog(get());
      const copy = await catalog.snapshot.get();
      for (const spec of SPECS) {
        const ranking = copy.index.rank(spec);
        const expected = [...ranking.positions]
          .map((i) => ({ id: copy.signals.text(i, 'id'), rank: ranking.scoreOf(i)!, coverage: copy.coverage[i]! }))
          .sort((a, b) => b.rank - a.rank || b.coverage - a.coverage || (a.id < b.id ? -1 : 1))
          .map((x) => x.id);
        expect(expected.length).toBeGreaterThan(0);
        for (const limit of [1, 5, expected.length]) {
          const page = catalog.search(copy, { orgId: OWNER, spec, limit });
          expect({ spec, limit, ids: page.rows.map((r) => r.id), hasMore: page.hasMore }).toEqual({
            spec,
            limit,
            ids: expected.slice(0, limit),
            hasMore: expected.length > limit,
          });
        }
      }
    });

    test('pages resumed from their last key add up to one page of everything, with filters and lookups', async () => {
      const catalog = new SignalsCatalog(get());
      const copy = await catalog.snapshot.get();
      const lookedUp = copy.signals.text(copy.signals.size - 1, 'id');
      const cases: Array<Omit<SearchFilters, 'limit' | 'after'>> = [
        { orgId: OWNER, spec: SPECS[0] },
        { orgId: OWNER, spec: SPECS[2], countries: ['US'], maxCpm: 4 },
        { orgId: OWNER, spec: SPECS[1], lookups: [{ id: lookedUp, domain: null }] },
        { orgId: '00000000-0000-4000-8000-000000000000', spec: SPECS[3] },
      ];
      for (const filters of cases) {
        const all = catalog.search(copy, { ...filters, limit: 10_000 });
        expect(all.hasMore).toBe(false);
        if (filters.lookups) expect(all.rows[0]!.id).toBe(lookedUp);
        const paged: string[] = [];
        let after: SearchFilters['after'];
        for (;;) {
          const page = catalog.search(copy, { ...filters, limit: 2, after });
          paged.push(...page.rows.map((r) => r.id));
          if (!page.hasMore) break;
          after = page.keys.at(-1);
        }
        expect(paged).toEqual(all.rows.map((r) => r.id));
      }
    });
  },
);
