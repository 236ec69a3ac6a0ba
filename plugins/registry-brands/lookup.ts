import type { DatabasePort } from '../../core/ports/database.ts';
import type { BrandIdentity, BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import type { BrandProfile } from '../../core/ports/brand-profiles.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { findEntry } from '../../lib/revisioned/store.ts';
import { brandProfile } from '../../lib/brand-profile.ts';
import { fontFamilies } from '../../lib/brand-identity.ts';
import { normalizeDomain } from '../../lib/domain.ts';
import { BRAND_TABLES } from './tables.ts';
import type { BrandData } from './schemas.ts';

/**
 * A creative's view of a brand profile: colours, the logo made for light backgrounds (banners are drawn on the
 * brand's colours, previews on white) else the first, font families and tagline.
 */
export function identityOf(profile: BrandProfile): BrandIdentity {
  const { primary, secondary, accent } = profile.colors;
  const colors = Object.fromEntries(Object.entries({ primary, secondary, accent }).filter(([, hex]) => hex)) as BrandIdentity['colors'];
  const logo = profile.logos.find((l) => l.background !== 'dark-bg' && (l.variant ?? 'primary') === 'primary') ?? profile.logos[0];
  const fonts = fontFamilies(profile.fonts);
  return {
    domain: profile.domain,
    name: profile.name,
    colors,
    ...(logo ? { logo_url: logo.url } : {}),
    ...(fonts ? { fonts } : {}),
    ...(profile.tagline ? { tagline: profile.tagline } : {}),
  };
}

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
      return entry ? identityOf(brandProfile(entry.domain, entry.source, entry.data, entry.authoritative)) : null;
    },
  };
}
