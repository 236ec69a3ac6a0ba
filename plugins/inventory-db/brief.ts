import type { RankedProduct } from '../../core/ports/inventory.ts';

/** Words of a brief (what brief_relevance names; the text index reads the brief itself). */
export function briefWords(brief: string): string[] {
  return [...new Set(brief.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter((w) => w.length > 1).slice(0, 32);
}

/** Why a product matched: the brief's words found in its name, channels or tags. */
export function relevance(words: readonly string[], p: RankedProduct): string | undefined {
  const found = `${p.name} ${p.tags.join(' ')} ${p.channels.join(' ')}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const hay = new Set(found);
  // A word of four letters or more also matches as a prefix (`sport` in `sports`).
  const hits = words.filter((w) => hay.has(w) || (w.length >= 4 && found.some((h) => h.startsWith(w))));
  return hits.length ? `Matches ${hits.join(', ')}` : 'Matches the brief in its description';
}
