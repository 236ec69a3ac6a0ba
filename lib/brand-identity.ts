import type { BrandIdentity } from '../core/ports/brand-lookup.ts';
import type { BrandProfile } from '../core/ports/brand-profiles.ts';

const HEX = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** `#abc` -> `#AABBCC`; anything else -> undefined. */
export function normalizeHexColor(value: unknown): string | undefined {
  if (typeof value !== 'string' || !HEX.test(value)) return undefined;
  const hex = value.length === 4 ? value.slice(1).replace(/./g, (c) => c + c) : value.slice(1);
  return `#${hex.toUpperCase()}`;
}

/**
 * A brand identity from a `brand_manifest` as the registry stores it (`colors: [{hex, type}]`,
 * `logos: [{url}]`) or as agent-protocol shows it (`colors: {primary, secondary}`, `logo_url`).
 * Unknown or malformed members are dropped.
 */
export function identityFromManifest(domain: string, name: string, manifest: unknown): BrandIdentity {
  const m = (manifest && typeof manifest === 'object' ? manifest : {}) as Record<string, any>;
  const colors: BrandIdentity['colors'] = {};
  if (Array.isArray(m.colors)) {
    const hexes = m.colors.map((c: any) => ({ hex: normalizeHexColor(c?.hex), type: typeof c?.type === 'string' ? c.type.toLowerCase() : '' }));
    const pick = (type: string) => hexes.find((c: any) => c.hex && c.type === type)?.hex;
    const untyped = hexes.filter((c: any) => c.hex && !['primary', 'secondary', 'accent'].includes(c.type)).map((c: any) => c.hex);
    colors.primary = pick('primary') ?? untyped.shift();
    colors.secondary = pick('secondary') ?? untyped.shift();
    colors.accent = pick('accent') ?? untyped.shift();
  } else if (m.colors && typeof m.colors === 'object') {
    for (const key of ['primary', 'secondary', 'accent'] as const) colors[key] = normalizeHexColor(m.colors[key]);
  }
  for (const key of Object.keys(colors) as (keyof typeof colors)[]) if (!colors[key]) delete colors[key];
  const logos: unknown[] = Array.isArray(m.logos) ? m.logos.map((l: any) => l?.url) : [m.logo_url, m.logo?.url];
  const logo = logos.find((u): u is string => typeof u === 'string' && /^https?:\/\//i.test(u) && u.length <= 2048);
  const fonts = fontFamilies(m.fonts);
  const tagline = typeof m.tagline === 'string' && m.tagline.trim() ? m.tagline.trim().slice(0, 500) : undefined;
  return { domain, name, colors, ...(logo ? { logo_url: logo } : {}), ...(fonts ? { fonts } : {}), ...(tagline ? { tagline } : {}) };
}

/** A family name that is safe to put in CSS and SVG as it is (letters, digits, spaces, dots and dashes). */
export function fontFamily(value: unknown): string | undefined {
  const name = typeof value === 'string' ? value : value && typeof value === 'object' ? (value as { family?: unknown }).family : undefined;
  return typeof name === 'string' && /^[A-Za-z0-9][A-Za-z0-9 .-]{0,63}$/.test(name.trim()) ? name.trim() : undefined;
}

/** brand.json / manifest `fonts` (role -> family name or `{family}`) as the primary and secondary families. */
export function fontFamilies(value: unknown): BrandIdentity['fonts'] | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const fonts: NonNullable<BrandIdentity['fonts']> = {};
  for (const role of ['primary', 'secondary'] as const) {
    const family = fontFamily(v[role]);
    if (family) fonts[role] = family;
  }
  return Object.keys(fonts).length ? fonts : undefined;
}

/**
 * A creative's view of a brand profile: colours, the logo made for light backgrounds (banners are drawn on the
 * brand's colours, previews on white) else the first, font families and tagline.
 */
export function identityFromProfile(profile: BrandProfile): BrandIdentity {
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
