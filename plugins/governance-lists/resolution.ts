import type { Json } from '../../core/task.ts';

/** A list resolved to what sellers cache: entries in a stable order, each with a stable key. */
export interface Resolution {
  /** `identifiers[]` (property lists) or `collections[]` (collection lists), in list order. */
  items: Json[];
  /** One key per item (its identity), for change detection. */
  keys: string[];
  /** Filter name -> entries kept although no data could judge them against that filter. */
  gaps: Record<string, Json[]>;
}

/** The most entries one list resolves to (the get_*_list page size is at most 10,000 too). */
export const MAX_RESOLVED = 50_000;
/** Records asked of the registry per source. */
export const CATALOG_LIMIT = 10_000;

/** `type:value` with the value lowercased: identifiers compare case-insensitively. */
export const keyOf = (id: { type: string; value: string }) => `${id.type}:${id.value.toLowerCase()}`;

/** Fingerprint of a resolution (order-insensitive). */
export function digestOf(keys: readonly string[]): string {
  return new Bun.CryptoHasher('sha256').update(JSON.stringify([...keys].sort())).digest('hex');
}

/** How two resolutions differ. */
export function changeOf(before: readonly string[], after: readonly string[]): { added: number; removed: number } {
  const old = new Set(before);
  const now = new Set(after);
  return { added: [...now].filter((k) => !old.has(k)).length, removed: [...old].filter((k) => !now.has(k)).length };
}
