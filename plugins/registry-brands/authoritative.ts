import type { Queryable } from '../../core/ports/database.ts';
import { recordAuthoritative } from '../../lib/revisioned/store.ts';
import { BRAND_TABLES } from './tables.ts';
import type { BrandData } from './schemas.ts';

/**
 * Store a domain's validated brand.json as its authoritative brand (called by the crawl
 * pipeline); community saves of the domain then answer 409.
 */
export async function recordBrandJson(
  tx: Queryable,
  domain: string,
  doc: Record<string, any>,
  options: { newId: () => string; now: Date },
): Promise<{ created: boolean; id: string }> {
  // brand.json may describe a house with several brands; the entry for the domain itself is
  // the brand whose domains include it, else the first one, else the house.
  const brands: any[] = Array.isArray(doc.brands) ? doc.brands : [];
  const own = brands.find((b) => Array.isArray(b?.domains) && b.domains.includes(domain)) ?? brands[0];
  const name = own?.names?.[0] ? Object.values(own.names[0])[0] : (own?.name ?? doc.house?.name ?? doc.name ?? domain);
  const data: BrandData = {
    brand_name: String(name),
    ...(own?.keller_type ? { keller_type: own.keller_type } : {}),
    ...(typeof doc.house?.domain === 'string' ? { house_domain: doc.house.domain } : {}),
  };
  const { created, entry } = await recordAuthoritative(tx, BRAND_TABLES, domain, {
    source: 'brand_json',
    data,
    document: doc,
    id: options.newId(),
    now: options.now,
  });
  return { created, id: entry.id };
}
