import * as v from 'valibot';
import * as r from '../../lib/response-schemas.ts';

export const brandManifestOut = r.obj({
  name: r.opt(r.str),
  description: r.opt(r.str),
  logos: r.opt(r.arr(r.obj({ url: r.str, tags: r.opt(r.strings) }))),
  colors: r.opt(r.arr(r.obj({ hex: r.str, type: r.opt(r.str) }))),
});

export const brandResolution = r.obj({
  canonical_id: r.str,
  canonical_domain: r.str,
  brand_name: r.str,
  keller_type: r.str,
  house_domain: r.str,
  source: v.picklist(['brand_json', 'enriched', 'community', 'hosted']),
  brand_manifest: r.opt(brandManifestOut),
  parent_brand: r.opt(r.str),
  brand_agent_url: r.opt(r.str),
});

export const brandJsonOut = r.obj({ domain: r.str, url: r.str, data: r.anyObject, fetched_at: r.time });

export const brandRegistryOut = r.obj({
  brands: r.arr(
    r.obj({
      domain: r.str,
      brand_name: r.str,
      source: r.str,
      has_manifest: r.bool,
      verified: r.bool,
      house_domain: r.str,
      keller_type: r.str,
      updated_at: r.time,
    }),
  ),
  total: r.int,
  limit: r.int,
  offset: r.int,
  stats: v.record(v.string(), r.int),
});

export const brandFindOut = r.obj({
  results: r.arr(r.obj({ domain: r.str, canonical_domain: r.str, brand_name: r.str, house_domain: r.str, keller_type: r.str, source: r.str })),
});
