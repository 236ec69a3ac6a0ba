import { expect, test } from 'bun:test';
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { TextIndex, termOf } from '../../lib/text-index.ts';

interface Doc {
  name: string;
  body: string;
}

const docs: Doc[] = [
  { name: 'Live sports streams', body: 'Matches on connected TV' },
  { name: 'Daily news readers', body: 'People reading news every day' },
  { name: 'Automotive shoppers', body: 'In-market for a new car' },
  { name: 'Recipe savers', body: 'Food lovers who save recipes' },
  { name: 'Cooking fans', body: 'Readers of our sports and streaming coverage' },
];
const index = new TextIndex(docs.length, (i) => docs[i]!, [
  { name: 'name', boost: 3, text: (d) => d.name },
  { name: 'body', boost: 1, text: (d) => d.body },
]);
/** Names of the matches, best first. */
const ranked = (query: string) => [...index.rank(query).positions].map((i) => docs[i]!.name);

test('stems: a word finds its other forms (streaming, streams)', () => {
  expect(ranked('streaming')).toEqual(['Live sports streams', 'Cooking fans']);
});

test('a name match outranks the same word in the body (field boosts)', () => {
  expect(ranked('sports')[0]).toBe('Live sports streams');
});

test('short words match only exactly: new does not find news (Porter2 keeps them apart)', () => {
  expect(ranked('new')).toEqual(['Automotive shoppers']);
});

test('4+ letters also match as a prefix (auto finds automotive); 6+ letters within an edit (recipies finds recipes)', () => {
  expect(ranked('auto')).toEqual(['Automotive shoppers']);
  expect(ranked('recipies')).toEqual(['Recipe savers']);
});

test('a query of stop words, single letters and bare numbers matches nothing', () => {
  expect(ranked('the and of a 25 54')).toEqual([]);
  expect(ranked('the sports x')).toEqual(['Live sports streams', 'Cooking fans']);
});

test('a ranking is computed once per query and kept: the same one comes back', () => {
  expect(index.rank('food lovers')).toBe(index.rank('food lovers'));
});

test('a ranking is best first, equal scores by position; scoreOf looks up a position', () => {
  // Each word in as many entries, alike: a tie of every entry. MiniSearch lists the matches of the
  // query's first word (the odd entries) before those of the second.
  const same = Array.from({ length: 40 }, (_, i) => ({ name: i % 2 ? 'kite' : 'surf', body: 'board' }));
  const twins = new TextIndex(same.length, (i) => same[i]!, [
    { name: 'name', boost: 3, text: (d) => d.name },
    { name: 'body', boost: 1, text: (d) => d.body },
  ]);
  const r = twins.rank('kite surf');
  expect(r.size).toBe(40);
  expect(new Set(r.scores).size).toBe(1);
  expect([...r.positions]).toEqual(same.map((_, i) => i));
  // Different scores: best first (the two entries naming both words), whatever their position.
  const names = ['kite', 'surf', 'kite surf', 'surf kite'];
  const mixed = new TextIndex(names.length, (i) => names[i]!, [{ name: 'name', boost: 1, text: (d) => d }]);
  expect([...mixed.rank('kite surf').positions]).toEqual([2, 3, 0, 1]);
  expect(mixed.rank('kite surf').scoreOf(2)).toBe(mixed.rank('kite surf').scores[0]!);
  expect(index.rank('the of').size).toBe(0);
  expect(index.rank('sports').scoreOf(2)).toBeUndefined();
});

/**
 * The ranking MiniSearch gives with the index's settings (how the index ranked before it kept its
 * own postings): its matches sorted by score, equal scores by position.
 */
function miniSearchRanking(entries: readonly Doc[], query: string): { positions: number[]; scores: number[] } {
  const search = new MiniSearch<{ i: number }>({
    idField: 'i',
    fields: ['name', 'body'],
    extractField: (doc, field) => (field === 'i' ? doc.i : entries[doc.i]![field as keyof Doc]) as unknown as string,
    tokenize: (text) => text.match(/[\p{L}\p{N}]+/gu) ?? [],
    processTerm: termOf,
    searchOptions: {
      combineWith: 'OR',
      prefix: (term) => term.length >= 4,
      fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
      boost: { name: 3, body: 1 },
    },
  });
  search.addAll(entries.map((_, i) => ({ i })));
  const words = (query.match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 32).join(' ');
  const hits = words ? search.search(words).map((h) => ({ position: h.id as number, score: h.score })) : [];
  hits.sort((a, b) => b.score - a.score || a.position - b.position);
  return { positions: hits.map((h) => h.position), scores: hits.map((h) => h.score) };
}

// Words that stem together, prefix one another, lie an edit apart, or are not indexed at all.
const WORDS = [
  'sport',
  'Sports',
  'sporting',
  'stream',
  'streams',
  'streaming',
  'streamer',
  'recipe',
  'recipes',
  'recipies',
  'auto',
  'automotive',
  'autos',
  'news',
  'new',
  'garden',
  'gardening',
  'gardener',
  'travel',
  'traveler',
  'travellers',
  'premium',
  'premiere',
  'the',
  'and',
  'a',
  '25',
  '4k',
  'kite',
];
const text = fc.array(fc.constantFrom(...WORDS), { maxLength: 12 }).map((words) => words.join(' '));

test("rankings are MiniSearch's to the last bit: same matches, same order, same scores (random catalogs and queries)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ name: text, body: text }), { minLength: 1, maxLength: 40 }),
      fc.array(text, { minLength: 1, maxLength: 4 }),
      (entries, queries) => {
        const index = new TextIndex(entries.length, (i) => entries[i]!, [
          { name: 'name', boost: 3, text: (d) => d.name },
          { name: 'body', boost: 1, text: (d) => d.body },
        ]);
        for (const query of queries) {
          const ranking = index.rank(query);
          expect({ positions: [...ranking.positions], scores: [...ranking.scores] }).toEqual(miniSearchRanking(entries, query));
        }
      },
    ),
    { numRuns: 300 },
  );
});
