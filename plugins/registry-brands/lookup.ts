import type { DatabasePort } from '../../core/ports/database.ts';
import type { BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { brandProfile } from '../../lib/brand-profile.ts';
import { identityFromProfile } from '../../lib/brand-identity.ts';
import { cachedBrandEntry } from './cached-entry.ts';
import type { BrandData } from './schemas.ts';

/** BrandLookup over this registry's entries: the authoritative brand.json when stored, else the brand_manifest. */
export function brandLookup(db: DatabasePort, cache: EntryCache<BrandData>): BrandLookupPort {
  return {
    async resolve(raw) {
      const entry = await cachedBrandEntry(db, cache, raw);
      return entry ? identityFromProfile(brandProfile(entry.domain, entry.source, entry.data, entry.authoritative)) : null;
    },
  };
}
