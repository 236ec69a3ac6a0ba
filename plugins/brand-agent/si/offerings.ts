import * as v from 'valibot';
import type { BrandProfile, BrandProfilesPort } from '../../../core/ports/brand-profiles.ts';
import type { SiOffering } from '../../../core/ports/conversation.ts';
import { domainSchema } from '../../../lib/domain.ts';

const url = v.pipe(v.string(), v.url('must be an absolute URL'), v.regex(/^https:\/\//, 'must be an https URL'));
const text = (max: number) => v.pipe(v.string(), v.minLength(1), v.maxLength(max));

/** An offering as configured (plugins.brand-agent.si.offerings): the brand it speaks for and what it can show. */
export const offeringOption = v.object({
  offering_id: v.pipe(v.string(), v.regex(/^[a-z0-9_.-]{1,128}$/, 'must be 1-128 of a-z 0-9 _ . -')),
  brand: domainSchema(),
  title: text(200),
  summary: v.optional(text(1000)),
  tagline: v.optional(text(200)),
  price_hint: v.optional(text(100)),
  image_url: v.optional(url),
  landing_url: v.optional(url),
  products: v.optional(
    v.array(
      v.object({
        product_id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 _ . -')),
        name: text(200),
        description: v.optional(text(1000)),
        price: v.optional(text(50)),
        image_url: v.optional(url),
        url: v.optional(url),
      }),
    ),
    [],
  ),
});

/** The default offering id of a brand: its domain's first label, letters and digits only (novamotors.example -> novamotors_conversational_v1). */
export const defaultOfferingId = (domain: string) => `${domain.split('.')[0]!.replace(/[^a-z0-9]/g, '')}_conversational_v1`;

/**
 * The agent's offerings: the configured ones, and for a represented brand without one, a default
 * offering from its registry profile (name, description, tagline, site), so every brand can talk.
 */
export function createOfferings(configured: readonly v.InferOutput<typeof offeringOption>[], domains: readonly string[], profiles: BrandProfilesPort) {
  const byId = new Map<string, SiOffering>(configured.map((o) => [o.offering_id, { ...o, brand_domain: o.brand }]));
  for (const domain of domains) {
    if (configured.some((o) => o.brand === domain)) continue;
    byId.set(defaultOfferingId(domain), {
      offering_id: defaultOfferingId(domain),
      brand_domain: domain,
      title: '',
      landing_url: `https://${domain}/`,
      products: [],
    });
  }
  /** A default offering takes its words from the profile at the time of the call. */
  const complete = (o: SiOffering, p: BrandProfile): SiOffering =>
    o.title ? o : { ...o, title: `Talk with ${p.name}`, summary: o.summary ?? p.description, tagline: o.tagline ?? p.tagline };
  return {
    ids: () => [...byId.keys()],
    all: () => [...byId.values()],
    /** The offering and its brand's profile, or null (unknown offering, or a brand the registry does not know). */
    async find(offeringId: string): Promise<{ offering: SiOffering; brand: BrandProfile } | null> {
      const o = byId.get(offeringId);
      if (!o) return null;
      const brand = await profiles.get(o.brand_domain);
      return brand ? { offering: complete(o, brand), brand } : null;
    },
  };
}
export type Offerings = ReturnType<typeof createOfferings>;
