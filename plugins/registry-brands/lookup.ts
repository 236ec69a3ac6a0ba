import type { DatabasePort } from '../../core/ports/database.ts';
import type { BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { findEntry } from '../../lib/revisioned/store.ts';
import { brandProfile } from '../../lib/brand-profile.ts';
import { identityFromProfile } from '../../lib/brand-identity.ts';
import { normalizeDomain } from '../../lib/domain.ts';
import { BRAND_TABLES } from './tables.ts';
import type { BrandData } from './schemas.ts';

/** BrandLookup over this registry's entries: the authoritative brand.json when stored, else the brand_manifest. */
export function brandLookup(db: DatabasePort, cache: EntryCache<BrandData>): BrandLookupPort {
  return {
    async resolve(raw) {
      let domain: string;
      try {
        domain = normalizeDomain(raw);
      } catch {
        return null;
      }
      const entry = await cache.get(domain, (d) => findEntry<BrandData>(db, BRAND_TABLES, d));
      return entry ? identityFromProfile(brandProfile(entry.domain, entry.source, entry.data, entry.authoritative)) : null;
    },
  };
}
