import { expect, test } from 'bun:test';
import { BuiltProducts } from '../../plugins/inventory-db/built-products.ts';
import { briefWords, productWords, relevance } from '../../plugins/inventory-db/brief.ts';
import type { Product } from '../../core/ports/inventory.ts';

const product = (i: number, name = `Product ${i}`, tags: string[] = [], channels: string[] = ['display']): Product => ({
  product_id: `p${i}`,
  name,
  description: 'd',
  publisher_properties: [{ publisher_domain: 'a.example', selection_type: 'all' }],
  channels,
  delivery_type: 'guaranteed',
  format_ids: [],
  pricing_options: [{ pricing_option_id: 'o', pricing_model: 'cpm', currency: 'USD', fixed_price: 10 }],
  tags,
  countries: [],
  daily_avails: 1000,
  ctr: 0.002,
});

/** brief_relevance as it was worked out per answer (the product's words split for each brief). */
function reference(words: readonly string[], p: Product): string {
  const found: string[] = `${p.name} ${p.tags.join(' ')} ${p.channels.join(' ')}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const hits = words.filter((w) => found.includes(w) || (w.length >= 4 && found.some((h) => h.startsWith(w))));
  return hits.length ? `Matches ${hits.join(', ')}` : 'Matches the brief in its description';
}

test('brief_relevance from the words split once per product is the one split per brief', () => {
  const products = [
    product(1, 'Premium CTV Sports', ['sports', 'live_events', 'Fußball'], ['ctv', 'olv']),
    product(2, 'Café Crème Ünïcode', ['über', 'naïve'], ['display']),
    product(3, 'Aa Bb Ccc Dddd', [], ['dooh']),
  ];
  const briefs = [
    'premium sports video on connected TV',
    'sport spor spo sp',
    'café creme ünï über naïv',
    'fußb fuss live_ev events',
    'aa ccc ddd dddd bbbb',
    'nothing here',
  ];
  for (const p of products)
    for (const brief of briefs) {
      const words = briefWords(brief);
      expect(relevance(words, productWords(p))).toBe(reference(words, p));
    }
});

test('a built product is built once and shared; at most max are kept, the oldest dropped first', () => {
  const builds: number[] = [];
  const built = new BuiltProducts((i) => {
    builds.push(i);
    return product(i);
  }, 2);
  const first = built.product(0);
  expect(built.product(0)).toBe(first);
  expect(built.words(0)).toBe(built.words(0));
  built.product(1);
  built.product(2);
  expect(builds).toEqual([0, 1, 2]);
  expect(built.product(0)).not.toBe(first);
  expect(built.product(0)).toEqual(first);
  expect(builds).toEqual([0, 1, 2, 0]);
});
