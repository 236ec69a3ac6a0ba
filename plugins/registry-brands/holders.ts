import type { DatabasePort } from '../../core/ports/database.ts';
import type { BrandHoldersPort } from '../../core/ports/brand-holders.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { findEntry } from '../../lib/revisioned/store.ts';
import { normalizeDomain } from '../../lib/domain.ts';
import { BRAND_TABLES } from './tables.ts';
import type { BrandData } from './schemas.ts';

/** BrandHolders over this registry's entries (the entry's owning organization), through the resolve cache. */
export function brandHolders(db: DatabasePort, cache: EntryCache<BrandData>): BrandHoldersPort {
  return {
    async holder(raw) {
      let domain: string;
      try {
        domain = normalizeDomain(raw);
      } catch {
        return null;
      }
      const entry = await cache.get(domain, (d) => findEntry<BrandData>(db, BRAND_TABLES, d));
      return entry?.owner_org_id ?? null;
    },
  };
}
