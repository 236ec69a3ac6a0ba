import type { Entry } from '../../lib/revisioned/store.ts';
import type { BrandData } from './schemas.ts';

/** The brand resolution result (SUPPLEMENT "Registry REST shapes"). */
export function resolution(entry: Entry<BrandData>) {
  const d = entry.data;
  return {
    canonical_id: entry.domain,
    canonical_domain: entry.domain,
    brand_name: d.brand_name,
    keller_type: d.keller_type ?? 'master',
    house_domain: d.house_domain ?? entry.domain,
    source: entry.source,
    ...(d.brand_manifest ? { brand_manifest: d.brand_manifest } : {}),
    ...(d.parent_brand ? { parent_brand: d.parent_brand } : {}),
    ...(brandAgentUrl(entry) ? { brand_agent_url: brandAgentUrl(entry) } : {}),
  };
}

/** A brand agent declared in the authoritative brand.json, if any. */
function brandAgentUrl(entry: Entry<BrandData>): string | undefined {
  const doc = entry.authoritative as { agents?: Array<{ type?: string; url?: string }> } | null;
  return doc?.agents?.find((a) => a?.type === 'brand' && typeof a.url === 'string')?.url;
}

export function registryItem(entry: Entry<BrandData>) {
  return {
    domain: entry.domain,
    brand_name: entry.data.brand_name,
    source: entry.source,
    has_manifest: Boolean(entry.data.brand_manifest),
    verified: entry.source === 'brand_json' || entry.source === 'hosted',
    house_domain: entry.data.house_domain ?? entry.domain,
    keller_type: entry.data.keller_type ?? 'master',
    updated_at: new Date(entry.updated_at).toISOString(),
  };
}
