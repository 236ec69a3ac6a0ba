import type { RankedProduct } from '../../core/ports/inventory.ts';

/** Words of a brief; 4+ letter words also match as prefixes (`sport` finds `sports`). */
export function briefWords(brief: string): string[] {
  return [...new Set(brief.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter((w) => w.length > 1).slice(0, 32);
}

/** The brief's words as the text of an OR query (`to_tsquery('english', ...)`). */
export const briefQuery = (words: string[]) => words.map((w) => (w.length >= 4 ? `${w}:*` : w)).join(' | ');

/** Why a product matched: the brief's words found in its name, channels or tags. */
export function relevance(words: readonly string[], p: RankedProduct): string | undefined {
  const hay = new Set([...(`${p.name} ${p.tags.join(' ')} ${p.channels.join(' ')}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])]);
  const hits = words.filter((w) => hay.has(w) || [...hay].some((h) => w.length >= 4 && h.startsWith(w)));
  return hits.length ? `Matches ${hits.join(', ')}` : 'Matches the brief in its description';
}
