import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { activationsAndVersion, importCatalog, searchSignalsSql, type SearchFilters, type SeedSignal } from '../../plugins/signals/catalog.ts';
import { queryOf, SignalsCatalog } from '../../plugins/signals/memory-catalog.ts';
import { adapterNames, dropSchema, openDatabase, skipPostgresUnlessConfigured } from '../support/db.ts';
import { rng } from '../support/random.ts';

// get_signals ranks from memory (memory-catalog.ts, ts-rank.ts) and must answer exactly as the SQL
// ranking (searchSignalsSql, the reference): same rows, same order, same sort keys (the float4
// ts_rank as float8, so cursors are interchangeable), same has_more, on a generated 10,000-signal
// catalog full of ties, for many specs, filters and cursor walks, on both storages.

const COUNT = 10_000;
const ORG_A = '0195f0c0-0000-7000-8000-0000000000aa';
const ORG_B = '0195f0c0-0000-7000-8000-0000000000bb';
const PRINCIPAL = 'perfcat-principal';

// Words sharing stems and prefixes (sport/sports/sporting, shop/shopper/shopping), stop words,
// short words, digits and non-ASCII letters.
const WORDS = (
  'sport sports sporting sportsman fan fans fanatic live stream streaming streamers game games gamer ' +
  'shop shops shopper shoppers shopping buy buyer buyers luxury lux auto autos automotive car cars ' +
  'travel traveler travelling run runner running health healthy fitness gym new news newsletter ' +
  'parent parents parenting family families pet pets dog dogs cat cats café naïve 4k tv ev ai ' +
  'the and of a in to for with premium intent in-market high-value b2b 2024 über straße'
).split(' ');
const PROVIDERS = ['Acme Data', 'acme data', 'Polk', 'Tie Data', 'ÉCLAIR Insights'];
const DOMAINS = ['acme.example', 'polk.example', 'tie-data.example', null];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'JP'];
const PLATFORMS = ['the-trade-desk', 'dv360', 'Amazon-DSP', 'xandr'];
const COVERAGE = [5, 10, 12.5, 20, 33.33, 50, 75.25, 99.99];
const CPM = [0.5, 1, 1.01, 2.5, 3, 12.75];

function words(r: () => number, n: number): string {
  return Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
}

function generated(): { signals: SeedSignal[] } {
  const r = rng(16);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const signals: SeedSignal[] = [];
  for (let i = 0; i < COUNT; i++) {
    // Every fourth signal is one of a few exact templates: identical text, so identical ranks (ties).
    const tied = i % 4 === 0;
    const type = pick(['marketplace', 'marketplace', 'custom', 'owned'] as const);
    const domain = pick(DOMAINS);
    signals.push({
      // Mixed case, '_' and '-': the id order is the database's collation.
      id: `${pick(['sig', 'Sig', 'SIG', 'sig-x', 'sig_x'])}_${(i * 7919) % COUNT}`,
      name: tied ? `Tied ${['sports fans', 'luxury shoppers', 'new parents'][i % 3]}` : words(r, 1 + Math.floor(r() * 4)),
      description: tied ? 'Synthetic tied signal.' : words(r, 3 + Math.floor(r() * 25)),
      signal_type: type,
      data_provider: pick(PROVIDERS),
      ...(domain ? { data_provider_domain: domain } : {}),
      coverage_percentage: pick(COVERAGE),
      pricing: type === 'owned' ? null : { cpm: pick(CPM), currency: 'USD' },
      tags: tied
        ? ['tied']
        : words(r, Math.floor(r() * 4))
            .split(' ')
            .filter(Boolean),
      countries: r() < 0.3 ? [] : COUNTRIES.filter(() => r() < 0.4),
      ...(type === 'custom' ? { owner_org: r() < 0.5 ? ORG_A : ORG_B } : {}),
      platforms: PLATFORMS.filter(() => r() < 0.5).map((p) => ({ platform: p, estimated_activation_duration_minutes: 5 })),
      agents: [],
    });
  }
  return { signals };
}

const SPECS = [
  'sports fans streaming live games',
  'sport',
  'luxury shoppers',
  'shop',
  'Tied sports fans',
  'tied',
  'new',
  'news',
  'the of and', // stop words only: nothing matches by text
  'a', // no usable word
  'new parents, family & pets!',
  '"live sports" -streaming',
  'in-market auto intent',
  'high-value b2b buyers 2024',
  'café naïve über straße',
  '4k tv ev ai',
  'fitness gym healthy health',
  'running run', // the same lexeme as prefix and exact: the database ranks it
  'cats dogs pets pet', // 'pet' both as prefix and exact, too
  'travel travelling traveler',
  'premium premium premium',
  'sportsman fanatic gamer',
  'zzzz nothing matches this',
  'SPORTS Fans',
];
/** Specs whose query memory does not rank (parseOrQuery gives null): get_signals asks the database. */
const ASKS_DATABASE = new Set(['running run', 'cats dogs pets pet']);

type Variant = Omit<SearchFilters, 'spec' | 'limit' | 'after'>;
const VARIANTS: Variant[] = [
  { orgId: ORG_A },
  { orgId: ORG_B, countries: ['US'], platforms: ['the-trade-desk'] },
  { orgId: ORG_A, catalogTypes: ['custom', 'owned'], dataProviders: ['ACME DATA', 'éclair insights'] },
  { orgId: ORG_B, maxCpm: 1.009999999999999, minCoverage: 12.5 },
  { orgId: ORG_A, maxCpm: 0.1 + 0.2 + 2.2, minCoverage: 33.33, countries: ['JP', 'FR'] },
  {
    orgId: ORG_A,
    lookups: [
      { id: 'sig_7919', domain: null },
      { id: 'Sig_1', domain: 'acme.example' },
      { id: 'nope', domain: null },
    ],
  },
];

for (const adapter of adapterNames()) {
  describe(`get_signals ranking from memory equals the SQL ranking [${adapter}]`, () => {
    const schema = `perfcat_rank_${adapter}_${process.pid}`;
    let db: DatabasePort;
    let catalog: SignalsCatalog;
    beforeAll(async () => {
      db = await openDatabase(adapter, schema);
      await db.migrate('signals', loadMigrations(join(import.meta.dir, '../../plugins/signals/migrations')));
      await importCatalog(db, generated());
      // One activation of the caller, so activations are compared too.
      const [first] = await db.query<{ id: string }>(sql`SELECT id FROM signals ORDER BY id LIMIT 1`);
      await db.query(sql`INSERT INTO signal_activations (id, signal_id, principal_id, destination_key, destination, status, estimated_minutes, ready_at, created_at)
        VALUES ('0195f0c0-0000-7000-8000-000000000001', ${first!.id}::text, ${PRINCIPAL}::text, 'platform:dv360', '{"type":"platform","platform":"dv360"}'::jsonb,
                'pending', 5, now(), now())`);
      catalog = new SignalsCatalog(db);
    }, 300_000);
    afterAll(async () => {
      await db?.close();
      await dropSchema(adapter, schema);
    });

    /** One page from memory as get_signals computes it; null where it asks the database. */
    async function fromMemory(f: SearchFilters) {
      const snapshot = await catalog.snapshot.get();
      const query = queryOf(f);
      if (!query && !f.lookups?.length) return { rows: [], keys: [], activations: [], hasMore: false };
      const page = catalog.search(snapshot, f, query ? await catalog.operands(query) : []);
      if (!page) return null;
      const { version, activations } = await activationsAndVersion(db, [{ principalId: PRINCIPAL, signalIds: page.rows.map((r) => r.id) }]);
      expect(version).toBe(snapshot.version);
      return { ...page, activations: activations.map(({ principal_id: _p, ...a }) => a) };
    }

    const byId = (xs: { id: string }[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : 1));

    /** Walks up to `pages` pages with each side's own cursors; both must agree on every page. */
    async function compareWalk(f: SearchFilters, pages: number): Promise<'memory' | 'database'> {
      let after: SearchFilters['after'];
      for (let page = 0; page < pages; page++) {
        const q = { ...f, after };
        const [memory, reference] = [await fromMemory(q), await searchSignalsSql(db, q, PRINCIPAL)];
        if (!memory) return 'database';
        expect({ spec: f.spec, page, rows: memory.rows, keys: memory.keys, hasMore: memory.hasMore }).toEqual({
          spec: f.spec,
          page,
          rows: reference.rows,
          keys: reference.keys,
          hasMore: reference.hasMore,
        });
        expect(byId(memory.activations)).toEqual(byId(reference.activations));
        if (!reference.hasMore) break;
        after = memory.keys[memory.keys.length - 1];
      }
      return 'memory';
    }

    test('every spec and filter: first pages equal, ties and has_more included', async () => {
      const sides = new Map<string, string>();
      let compared = 0;
      for (const spec of SPECS) {
        for (const variant of VARIANTS) {
          sides.set(spec, await compareWalk({ ...variant, spec, limit: 50 }, 1));
          compared++;
        }
      }
      // Memory answered everything except the specs it hands to the database.
      for (const [spec, side] of sides) expect({ spec, side }).toEqual({ spec, side: ASKS_DATABASE.has(spec) ? 'database' : 'memory' });
      expect(compared).toBe(SPECS.length * VARIANTS.length);
    }, 300_000);

    test('100 random specs of catalog words with random filters: equal', async () => {
      const r = rng(1616);
      let fromMemory = 0;
      for (let i = 0; i < 100; i++) {
        const spec = words(r, 1 + Math.floor(r() * 6));
        const variant = VARIANTS[Math.floor(r() * VARIANTS.length)]!;
        if ((await compareWalk({ ...variant, spec, limit: 1 + Math.floor(r() * 100) }, 2)) === 'memory') fromMemory++;
      }
      // Only specs naming one lexeme both as prefix and exact go to the database.
      expect(fromMemory).toBeGreaterThan(80);
    }, 300_000);

    test('cursor walks across many pages (small pages through big tie groups) stay equal', async () => {
      expect(await compareWalk({ orgId: ORG_A, spec: 'tied sports fans', limit: 7 }, 40)).toBe('memory');
      expect(await compareWalk({ orgId: ORG_B, spec: 'shop sport', limit: 100, countries: ['DE'] }, 15)).toBe('memory');
      expect(await compareWalk({ orgId: ORG_A, spec: 'news', limit: 13, catalogTypes: ['marketplace'] }, 10)).toBe('memory');
    }, 300_000);

    test('the first 200 signals of a broad spec, ranked, have distinct ranks as well as ties (the test discriminates)', async () => {
      const { rows, keys } = await searchSignalsSql(db, { orgId: ORG_A, spec: 'sports fans streaming live games shop', limit: 200 }, PRINCIPAL);
      const ranks = new Set(keys.map((k) => k.rank));
      expect(ranks.size).toBeGreaterThan(20);
      expect(ranks.size).toBeLessThan(rows.length);
    }, 60_000);

    test('a cursor naming a signal memory does not hold is answered by the database', async () => {
      expect(await fromMemory({ orgId: ORG_A, spec: 'sport', limit: 5, after: { anchor: 0, rank: 0.5, coverage: '10.00', id: 'gone' } })).toBeNull();
    });
  });
}
skipPostgresUnlessConfigured('get_signals ranking from memory equals the SQL ranking');
