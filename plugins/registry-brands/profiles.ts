import type { DatabasePort } from '../../core/ports/database.ts';
import type { BrandProfilesPort } from '../../core/ports/brand-profiles.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { findEntry } from '../../lib/revisioned/store.ts';
import { brandProfile } from '../../lib/brand-profile.ts';
import { normalizeDomain } from '../../lib/domain.ts';
import { BRAND_TABLES } from './tables.ts';
import type { BrandData } from './schemas.ts';

/** BrandProfiles over this registry's entries (brand.json when stored, else the brand_manifest). */
export function brandProfiles(db: DatabasePort, cache: EntryCache<BrandData>): BrandProfilesPort {
  return {
    async get(raw) {
      let domain: string;
      try {
        domain = normalizeDomain(raw);
      } catch {
        return null;
      }
      const entry = await cache.get(domain, (d) => findEntry<BrandData>(db, BRAND_TABLES, d));
      return entry ? brandProfile(entry.domain, entry.source, entry.data, entry.authoritative) : null;
    },
  };
}
