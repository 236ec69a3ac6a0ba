import type { DatabasePort } from '../../core/ports/database.ts';
import type { BrandHoldersPort } from '../../core/ports/brand-holders.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { cachedBrandEntry } from './cached-entry.ts';
import type { BrandData } from './schemas.ts';

/** BrandHolders over this registry's entries (the entry's owning organization), through the resolve cache. */
export function brandHolders(db: DatabasePort, cache: EntryCache<BrandData>): BrandHoldersPort {
  return {
    async holder(raw) {
      return (await cachedBrandEntry(db, cache, raw))?.owner_org_id ?? null;
    },
  };
}
