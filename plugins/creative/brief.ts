import type { BrandIdentity } from '../../core/ports/brand-lookup.ts';
import type { Offering } from '../../core/ports/creative-generator.ts';
import { identityFromManifest, normalizeHexColor } from '../../lib/brand-identity.ts';
import { isHttpUrl } from './manifest.ts';

type Json = Record<string, any>;

/** What a build is generated from, gathered from every place a request may carry it. */
export interface Brief {
  message?: string;
  /** Brand given in the request itself (promoted_offerings.brand_manifest, brand_kit_override). */
  brand?: BrandIdentity;
  /** `brand.domain` to resolve through the brand lookup (fills what the request did not give). */
  lookupDomain?: string;
  /** The domain is the account's brand, not a `brand` the caller asked for: used when known, never refused. */
  lookupOptional?: boolean;
  offerings: Offering[];
  headline?: string;
  cta?: string;
}

const text = (x: unknown, max = 500) => (typeof x === 'string' && x.trim() ? x.trim().slice(0, max) : undefined);
const url = (x: unknown) => (typeof x === 'string' && isHttpUrl(x) ? x : undefined);

function domainOf(u: string | undefined): string | undefined {
  try {
    return u ? new URL(u).hostname.replace(/^www\./, '') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Generation inputs: `message`; `brand: {domain}` (and 3.1 `brand_kit_override`); in the manifest,
 * `assets.promoted_offerings` `{brand_manifest, inline_offerings}` (agent-protocol) or the AdCP 3.x
 * forms, an `offering` catalog asset and a `brief` asset (headline, call to action).
 */
export function extractBrief(input: Json): Brief {
  const assets: Json = input.creative_manifest?.assets ?? {};
  const offerings: Offering[] = [];
  const brief: Brief = { message: text(input.message, 2000), offerings };

  const promoted = assets.promoted_offerings as Json | undefined;
  for (const o of promoted?.inline_offerings ?? []) {
    offerings.push({ name: o.name, description: text(o.description, 2000), landing_url: url(o.landing_url), image_url: url(o.image_url) });
  }
  for (const asset of Object.values(assets) as Json[]) {
    if (asset?.asset_type === 'catalog' && (asset.type ?? 'offering') === 'offering' && Array.isArray(asset.items)) {
      for (const item of asset.items.slice(0, 50)) {
        const name = text(item?.name, 200);
        if (!name) continue;
        const image = Array.isArray(item.assets) ? item.assets.find((a: Json) => a?.asset_type === 'image' && url(a.url))?.url : undefined;
        offerings.push({
          name,
          description: text(item.description, 2000),
          tagline: text(item.tagline, 200),
          landing_url: url(item.landing_url ?? item.checkout_url),
          image_url: image,
        });
      }
    }
    if (asset?.asset_type === 'brief') {
      brief.headline ??= text(asset.messaging?.headline, 200);
      brief.cta ??= text(asset.messaging?.cta, 60);
      brief.message ??= text(asset.messaging?.key_messages?.[0], 2000) ?? text(asset.name, 200);
    }
  }

  const requestBrand = input.brand as Json | undefined;
  const kit = requestBrand?.brand_kit_override ?? input.creative_manifest?.brand?.brand_kit_override;
  const manifest = promoted?.brand_manifest as Json | undefined;
  const domain = text(requestBrand?.domain, 253) ?? text(input.creative_manifest?.brand?.domain, 253) ?? domainOf(url(manifest?.url));
  if (manifest?.name || kit) {
    const base = identityFromManifest(domain ?? '', text(manifest?.name, 200) ?? '', manifest ?? {});
    for (const key of ['primary', 'secondary', 'accent'] as const) base.colors[key] = normalizeHexColor(kit?.colors?.[key]) ?? base.colors[key];
    for (const key of Object.keys(base.colors) as (keyof typeof base.colors)[]) if (!base.colors[key]) delete base.colors[key];
    if (!base.logo_url && url(kit?.logo?.url)) base.logo_url = kit.logo.url;
    brief.brand = base;
  }
  // The registry fills what the request left out (a name, colours, a logo).
  if (requestBrand?.domain && (!brief.brand?.name || !brief.brand.colors.primary)) brief.lookupDomain = requestBrand.domain;
  // A request naming no brand at all is for the brand of the account it is billed to (3.x `account.brand`).
  const accountDomain = text(input.account?.brand?.domain, 253);
  if (!requestBrand && !brief.brand && accountDomain) {
    brief.lookupDomain = accountDomain;
    brief.lookupOptional = true;
  }
  return brief;
}

/** The request's brand completed by the registry's (the request wins field by field). */
export function mergeBrand(given: BrandIdentity | undefined, resolved: BrandIdentity | null): BrandIdentity | undefined {
  if (!resolved) return given;
  if (!given) return resolved;
  return {
    domain: given.domain || resolved.domain,
    name: given.name || resolved.name,
    colors: { ...resolved.colors, ...given.colors },
    ...((given.logo_url ?? resolved.logo_url) ? { logo_url: given.logo_url ?? resolved.logo_url } : {}),
    ...((given.fonts ?? resolved.fonts) ? { fonts: given.fonts ?? resolved.fonts } : {}),
    ...((given.tagline ?? resolved.tagline) ? { tagline: given.tagline ?? resolved.tagline } : {}),
  };
}
