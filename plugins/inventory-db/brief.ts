import type { Product } from '../../core/ports/inventory.ts';

/** Words of a brief (what brief_relevance names; the text index reads the brief itself). */
export function briefWords(brief: string): string[] {
  return [...new Set(brief.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter((w) => w.length > 1).slice(0, 32);
}

/**
 * What a product's name, tags and channels offer a brief's words (found once per product): each of
 * their words, and its prefixes of four letters or more (`sport` matches `sports`).
 */
export type ProductWords = ReadonlySet<string>;

export function productWords(p: Pick<Product, 'name' | 'tags' | 'channels'>): ProductWords {
  const out = new Set<string>();
  for (const word of `${p.name} ${p.tags.join(' ')} ${p.channels.join(' ')}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    out.add(word);
    for (let end = 4; end < word.length; end++) out.add(word.slice(0, end));
  }
  return out;
}

/** Why a product matched: the brief's words found in its name, channels or tags. */
export function relevance(words: readonly string[], offered: ProductWords): string {
  const hits = words.filter((w) => offered.has(w));
  return hits.length ? `Matches ${hits.join(', ')}` : 'Matches the brief in its description';
}
