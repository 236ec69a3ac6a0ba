import type { DatabasePort } from '../../core/ports/database.ts';
import type { BrandProfilesPort } from '../../core/ports/brand-profiles.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { brandProfile } from '../../lib/brand-profile.ts';
import { cachedBrandEntry } from './cached-entry.ts';
import type { BrandData } from './schemas.ts';

/** BrandProfiles over this registry's entries (brand.json when stored, else the brand_manifest). */
export function brandProfiles(db: DatabasePort, cache: EntryCache<BrandData>): BrandProfilesPort {
  return {
    async get(raw) {
      const entry = await cachedBrandEntry(db, cache, raw);
      return entry ? brandProfile(entry.domain, entry.source, entry.data, entry.authoritative) : null;
    },
  };
}
