import type { BrandLogo, BrandPortfolio, BrandProfile, PortfolioBrand, PortfolioProperty, PortfolioTrademark } from '../core/ports/brand-profiles.ts';
import { tryNormalizeDomain } from './domain.ts';
import { normalizeHexColor } from './brand-identity.ts';

const LOGO_ENUMS = {
  orientation: ['square', 'horizontal', 'vertical', 'stacked'],
  background: ['dark-bg', 'light-bg', 'transparent-bg'],
  variant: ['primary', 'secondary', 'icon', 'wordmark', 'full-lockup'],
} as const;
const COLOR_ROLES = ['primary', 'secondary', 'accent', 'background', 'text'] as const;
const KELLER = ['master', 'sub_brand', 'endorsed', 'independent'] as const;

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown, max = 2000) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : undefined);
const strings = (v: unknown, max = 50) =>
  Array.isArray(v)
    ? v
        .map((x) => str(x, 200))
        .filter((x): x is string => !!x)
        .slice(0, max)
    : [];
const httpUrl = (v: unknown) => (typeof v === 'string' && /^https?:\/\/[^\s]+$/i.test(v) && v.length <= 2048 ? v : undefined);

/** `[{en: "Acme"}]` entries with one non-empty string each. */
function localizedNames(v: unknown): Array<Record<string, string>> {
  if (!Array.isArray(v)) return [];
  return v
    .filter((n) => isObj(n) && Object.keys(n).length === 1 && typeof Object.values(n)[0] === 'string' && (Object.values(n)[0] as string).trim())
    .slice(0, 20);
}

function logos(v: unknown): BrandLogo[] {
  if (!Array.isArray(v)) return [];
  const out: BrandLogo[] = [];
  for (const l of v.slice(0, 50)) {
    const url = httpUrl(l?.url);
    if (!url) continue;
    const logo: BrandLogo = { url };
    for (const key of ['orientation', 'background', 'variant'] as const) if ((LOGO_ENUMS[key] as readonly string[]).includes(l[key])) logo[key] = l[key];
    const tags = strings(l.tags, 20);
    if (tags.length) logo.tags = tags;
    for (const key of ['width', 'height'] as const) if (Number.isInteger(l[key]) && l[key] > 0) logo[key] = l[key];
    out.push(logo);
  }
  return out;
}

/** brand.json `colors` (role -> hex or hex[]) or a manifest's `[{hex, type}]`, as role -> `#RRGGBB`. */
function colors(v: unknown): BrandProfile['colors'] {
  const out: BrandProfile['colors'] = {};
  if (Array.isArray(v)) {
    const hexes = v.map((c) => ({ hex: normalizeHexColor(c?.hex), type: typeof c?.type === 'string' ? c.type.toLowerCase() : '' })).filter((c) => c.hex);
    const untyped = hexes.filter((c) => !(COLOR_ROLES as readonly string[]).includes(c.type)).map((c) => c.hex!);
    for (const role of ['primary', 'secondary', 'accent'] as const) {
      const hex = hexes.find((c) => c.type === role)?.hex ?? untyped.shift();
      if (hex) out[role] = hex;
    }
    for (const role of ['background', 'text'] as const) {
      const hex = hexes.find((c) => c.type === role)?.hex;
      if (hex) out[role] = hex;
    }
  } else if (isObj(v)) {
    for (const role of COLOR_ROLES) {
      const hex = normalizeHexColor(Array.isArray(v[role]) ? v[role][0] : v[role]);
      if (hex) out[role] = hex;
    }
  }
  return out;
}

/** Font roles as a family name (the files and features of brand.json are not passed on). */
function fonts(v: unknown): Record<string, unknown> | undefined {
  if (!isObj(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [role, font] of Object.entries(v).slice(0, 20)) {
    const family = typeof font === 'string' ? str(font, 200) : str(font?.family, 200);
    if (family) out[role] = { family, ...(strings(font?.fallbacks, 10).length ? { fallbacks: strings(font.fallbacks, 10) } : {}) };
  }
  return Object.keys(out).length ? out : undefined;
}

function tone(v: unknown): BrandProfile['tone'] {
  if (typeof v === 'string') return str(v) ? { voice: str(v)! } : undefined;
  if (!isObj(v)) return undefined;
  const out: NonNullable<BrandProfile['tone']> = {};
  if (str(v.voice)) out.voice = str(v.voice);
  for (const key of ['attributes', 'dos', 'donts'] as const) if (strings(v[key]).length) out[key] = strings(v[key]);
  return Object.keys(out).length ? out : undefined;
}

function tagline(v: unknown): string | undefined {
  if (typeof v === 'string') return str(v, 500);
  return localizedNames(v)
    .map((n) => Object.values(n)[0]!)[0]
    ?.slice(0, 500);
}

const host = (u: unknown) => {
  try {
    return typeof u === 'string' ? new URL(u).hostname.replace(/^www\./, '') : undefined;
  } catch {
    return undefined;
  }
};

/** The brand of a brand.json document a domain stands for: the one naming the domain, else the first. */
function brandOf(doc: Obj, domain: string): Obj | undefined {
  const brands: Obj[] = Array.isArray(doc.brands) ? doc.brands.filter(isObj) : [];
  return brands.find((b) => (Array.isArray(b.domains) && b.domains.includes(domain)) || host(b.url) === domain) ?? brands[0];
}

const PROPERTY_TYPES = ['website', 'mobile_app', 'ctv_app', 'desktop_app', 'dooh', 'podcast', 'radio', 'streaming_audio'];
const RELATIONSHIPS = ['owned', 'direct', 'delegated', 'ad_network'];
const MARK_STATUSES = ['active', 'pending', 'abandoned', 'cancelled', 'expired'];
const LICENSE_TYPES = ['owned', 'licensed_in', 'licensed_out'];
const MAX_ITEMS = 500;
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj).slice(0, MAX_ITEMS) : []);
const domainOf = (v: unknown) => (typeof v === 'string' ? (tryNormalizeDomain(v) ?? undefined) : undefined);

function properties(v: unknown): PortfolioProperty[] {
  const out: PortfolioProperty[] = [];
  for (const p of objects(v)) {
    const identifier = str(p.identifier, 2048);
    if (!PROPERTY_TYPES.includes(p.type) || !identifier) continue;
    const property: PortfolioProperty = { type: p.type, identifier, relationship: RELATIONSHIPS.includes(p.relationship) ? p.relationship : 'owned' };
    if (str(p.store, 50)) property.store = str(p.store, 50);
    if (typeof p.region === 'string' && /^([A-Z]{2}|global)$/.test(p.region)) property.region = p.region;
    out.push(property);
  }
  return out;
}

function trademarks(v: unknown): PortfolioTrademark[] {
  const out: PortfolioTrademark[] = [];
  for (const t of objects(v)) {
    const registry = str(t.registry, 50);
    const number = str(t.number, 100);
    const mark = str(t.mark, 200);
    if (!registry || !number || !mark) continue;
    const trademark: PortfolioTrademark = {
      registry,
      number,
      mark,
      status: MARK_STATUSES.includes(t.status) ? t.status : 'active',
      license_type: LICENSE_TYPES.includes(t.license_type) ? t.license_type : 'owned',
    };
    const licensor = domainOf(t.licensor_domain);
    if (licensor && trademark.license_type === 'licensed_in') trademark.licensor_domain = licensor;
    const countries = strings(t.countries, 250).filter((c) => /^[A-Za-z]{2}$/.test(c));
    if (countries.length) trademark.countries = countries.map((c) => c.toUpperCase());
    const classes = Array.isArray(t.nice_classes)
      ? t.nice_classes.filter((n: unknown) => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 45)
      : [];
    if (classes.length) trademark.nice_classes = classes.slice(0, 45);
    out.push(trademark);
  }
  return out;
}

/**
 * The house portfolio of a brand.json house document (`house` object with brands[] and/or brand_refs[]);
 * a house redirect (`house: "domain"`) gives only the house it names. Else undefined.
 */
function portfolio(doc: Obj): BrandPortfolio | undefined {
  if (typeof doc.house === 'string') {
    const house = domainOf(doc.house);
    return house ? { house_domain: house, brands: [], trademarks: [] } : undefined;
  }
  const houseDomain = domainOf(doc.house?.domain);
  if (!houseDomain) return undefined;
  const brands: PortfolioBrand[] = [];
  for (const b of objects(doc.brands)) {
    const domains = [...new Set([host(b.url), ...strings(b.domains, 50)].map(domainOf).filter((d): d is string => !!d))];
    const brand: PortfolioBrand = { domains, properties: properties(b.properties), trademarks: trademarks(b.trademarks) };
    if (str(b.id, 128)) brand.brand_id = str(b.id, 128);
    if (str(b.parent_brand, 128)) brand.parent_brand = str(b.parent_brand, 128);
    brands.push(brand);
  }
  for (const r of objects(doc.brand_refs)) {
    const domain = domainOf(r.domain);
    if (!domain) continue;
    const brand: PortfolioBrand = { domains: [domain], properties: [], trademarks: [], ref: {} };
    if (str(r.brand_id, 128)) brand.brand_id = str(r.brand_id, 128);
    if (typeof r.effective_at === 'string' && !Number.isNaN(Date.parse(r.effective_at))) brand.ref = { effective_at: r.effective_at };
    brands.push(brand);
  }
  return { house_domain: houseDomain, brands, trademarks: trademarks(doc.trademarks) };
}

/** The registry's stored entry data (brand_name, keller_type, house_domain, brand_manifest). */
export interface BrandEntryData {
  brand_name: string;
  keller_type?: string;
  house_domain?: string;
  brand_manifest?: unknown;
}

/**
 * A brand's identity from a registry entry: the authoritative brand.json (when stored) gives the
 * richest data; a community or enriched entry gives its brand_manifest. Untrusted input: only
 * well-formed members are kept (http(s) URLs, `#RRGGBB` colours, known enum values), texts bounded.
 */
export function brandProfile(domain: string, source: string, data: BrandEntryData, authoritative?: unknown): BrandProfile {
  const manifest = isObj(data.brand_manifest) ? data.brand_manifest : {};
  const doc = isObj(authoritative) ? authoritative : null;
  const brand = doc ? brandOf(doc, domain) : undefined;
  const names = localizedNames(brand?.names);
  const name = (names[0] ? Object.values(names[0])[0] : undefined) ?? str(data.brand_name, 200) ?? domain;
  const houseDomain = str(doc?.house?.domain, 253) ?? (typeof doc?.house === 'string' ? str(doc.house, 253) : undefined) ?? data.house_domain ?? domain;
  const profile: BrandProfile = {
    domain,
    source,
    name,
    names: names.length ? names : [{ en: name }],
    house: { domain: houseDomain, name: str(doc?.house?.name, 200) ?? (houseDomain === domain ? name : houseDomain) },
    logos: logos(brand?.logos ?? manifest.logos),
    colors: colors(brand?.colors ?? manifest.colors),
  };
  const brandId = str(brand?.id, 128);
  if (brandId) profile.brand_id = brandId;
  const keller = brand?.keller_type ?? data.keller_type;
  if ((KELLER as readonly string[]).includes(keller)) profile.keller_type = keller;
  const description = str(brand?.description ?? manifest.description, 5000);
  if (description) profile.description = description;
  const industries = strings(brand?.industries ?? manifest.industries);
  if (industries.length) profile.industries = industries;
  const f = fonts(brand?.fonts ?? manifest.fonts);
  if (f) profile.fonts = f;
  const t = tone(brand?.tone ?? manifest.tone);
  if (t) profile.tone = t;
  const tag = tagline(brand?.tagline ?? manifest.tagline);
  if (tag) profile.tagline = tag;
  const houses = doc ? portfolio(doc) : undefined;
  if (houses) profile.portfolio = houses;
  return profile;
}
