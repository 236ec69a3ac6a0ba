import type { DatabasePort } from '../../core/ports/database.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { findEntry, type Entry } from '../../lib/revisioned/store.ts';
import { normalizeDomain } from '../../lib/domain.ts';
import { BRAND_TABLES } from './tables.ts';
import type { BrandData } from './schemas.ts';

/** The registry's brand entry for a domain as another plugin names it (unnormalized), through the resolve cache; null for no entry or no domain. */
export async function cachedBrandEntry(db: DatabasePort, cache: EntryCache<BrandData>, raw: string): Promise<Entry<BrandData> | null> {
  let domain: string;
  try {
    domain = normalizeDomain(raw);
  } catch {
    return null;
  }
  return (await cache.get(domain, (d) => findEntry<BrandData>(db, BRAND_TABLES, d))) ?? null;
}
