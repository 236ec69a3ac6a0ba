import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { BrandProfile, BrandProfilesPort } from '../../core/ports/brand-profiles.ts';
import type { Logger } from '../../core/log.ts';

const FIELDS = [
  'description',
  'industries',
  'keller_type',
  'logos',
  'colors',
  'fonts',
  'visual_guidelines',
  'tone',
  'tagline',
  'voice_synthesis',
  'assets',
  'rights',
] as const;
type Field = (typeof FIELDS)[number];
/** Sections any caller may read; the others need a credential (the caller learns they exist from available_fields). */
const PUBLIC: ReadonlySet<Field> = new Set(['description', 'industries', 'keller_type', 'logos', 'colors', 'tagline']);

export interface RepresentedBrand {
  domain: string;
  brand_id?: string;
}

function section(p: BrandProfile, field: Field): unknown {
  switch (field) {
    case 'description':
      return p.description;
    case 'industries':
      return p.industries;
    case 'keller_type':
      return p.keller_type;
    case 'logos':
      return p.logos.length ? p.logos : undefined;
    case 'colors':
      return Object.keys(p.colors).length ? p.colors : undefined;
    case 'fonts':
      return p.fonts;
    case 'tone':
      return p.tone;
    case 'tagline':
      return p.tagline;
    default:
      return undefined;
  }
}

export function getBrandIdentityTask(brands: readonly RepresentedBrand[], profiles: BrandProfilesPort | undefined, logger: Logger) {
  return defineTask({
    name: 'get_brand_identity',
    description:
      'Identity of a brand this agent represents (brand_id from its brand.json, or its domain): house, names, keller type, logos, colours, tagline; fonts and tone for authenticated callers. Sourced from the brand registry.',
    protocol: 'brand',
    requestSchema: 'brand/get-brand-identity-request.json',
    auth: 'optional',
    input: v.looseObject({
      brand_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(253, 'must be at most 253 characters')),
      fields: v.optional(v.pipe(v.array(v.picklist(FIELDS, `must be one of ${FIELDS.join(', ')}`)), v.minLength(1, 'must not be empty'))),
      use_case: v.optional(v.pipe(v.string(), v.maxLength(500))),
      adcp_major_version: v.optional(v.pipe(v.number(), v.integer(), v.minValue(3), v.maxValue(3))),
      adcp_version: v.optional(v.pipe(v.string(), v.maxLength(32))),
      ext: v.optional(v.record(v.string(), v.unknown())),
    }),
    async handler({ input, principal }) {
      const id = input.brand_id.toLowerCase();
      const represented = brands.find((b) => b.brand_id?.toLowerCase() === id || b.domain === id);
      const notFound = () =>
        new ProtocolError('REFERENCE_NOT_FOUND', `This agent does not represent a brand ${input.brand_id.slice(0, 128)}`, {
          status: 404,
          field: 'brand_id',
          suggestion: `Represented brands: ${brands.map((b) => b.brand_id ?? b.domain).join(', ') || 'none'}`,
        });
      if (!represented || !profiles) throw notFound();
      let profile: BrandProfile | null;
      try {
        profile = await profiles.get(represented.domain);
      } catch (error) {
        logger.warn({ err: error, domain: represented.domain }, 'brand registry could not be asked');
        throw new ProtocolError('SERVICE_UNAVAILABLE', 'The brand registry cannot be reached; retry later', { status: 503, recovery: 'transient' });
      }
      if (!profile)
        throw new ProtocolError('REFERENCE_NOT_FOUND', `The brand registry has no entry for ${represented.domain}`, { status: 404, field: 'brand_id' });
      const anonymous = principal.id === 'anonymous';
      const wanted: readonly Field[] = input.fields ?? FIELDS;
      const body: Json = { brand_id: input.brand_id, house: profile.house, names: profile.names };
      const withheld: Field[] = [];
      for (const field of wanted) {
        const value = section(profile, field);
        if (value === undefined) continue;
        if (anonymous && !PUBLIC.has(field)) withheld.push(field);
        else body[field] = value;
      }
      if (withheld.length) body.available_fields = withheld;
      return body;
    },
  });
}
