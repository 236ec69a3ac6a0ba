import * as v from 'valibot';
import { domainSchema } from '../../lib/domain.ts';
import { qInt } from '../../core/endpoint.ts';

const text = (max: number) =>
  v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
const httpsUrl = v.pipe(v.string('must be a string'), v.maxLength(2048), v.url('must be a URL'), v.regex(/^https?:\/\//i, 'must be an http(s) URL'));

export const kellerTypes = ['master', 'sub_brand', 'endorsed', 'independent'] as const;

/** `brand_manifest` as the spec lists it; extra members are kept (the body size cap bounds them). */
export const brandManifest = v.looseObject({
  name: v.optional(text(200)),
  description: v.optional(v.pipe(v.string('must be a string'), v.maxLength(5000))),
  logos: v.optional(
    v.pipe(
      v.array(v.object({ url: httpsUrl, tags: v.optional(v.pipe(v.array(text(64)), v.maxLength(20))) }), 'must be an array'),
      v.maxLength(50, 'accepts at most 50 logos'),
    ),
  ),
  colors: v.optional(
    v.pipe(
      v.array(
        v.object({
          hex: v.pipe(v.string(), v.regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'must be #RGB or #RRGGBB')),
          type: v.optional(text(64)),
        }),
      ),
      v.maxLength(50, 'accepts at most 50 colors'),
    ),
  ),
});

export const saveBody = v.object({
  domain: domainSchema(),
  brand_name: text(200),
  brand_manifest: v.optional(brandManifest),
  keller_type: v.optional(v.picklist(kellerTypes, `must be one of ${kellerTypes.join(', ')}`)),
  house_domain: v.optional(domainSchema()),
  parent_brand: v.optional(text(200)),
  edit_summary: v.optional(text(500)),
});
export type SaveBody = v.InferOutput<typeof saveBody>;

/** The editable record stored per brand (and in each revision). */
export type BrandData = Omit<SaveBody, 'domain' | 'edit_summary'>;

export const registryQuery = v.object({
  search: v.optional(v.pipe(v.string(), v.maxLength(200, 'must be at most 200 characters'))),
  source: v.optional(v.picklist(['brand_json', 'community', 'enriched', 'hosted'], 'must be one of brand_json, community, enriched, hosted')),
  limit: qInt(1, 1000, 100),
  offset: qInt(0, 1_000_000, 0),
});

export const domainQuery = v.object({ domain: domainSchema() });
