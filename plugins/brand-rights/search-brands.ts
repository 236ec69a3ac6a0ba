import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import type { BrandProfile, BrandProfilesPort } from '../../core/ports/brand-profiles.ts';
import type { Logger } from '../../core/log.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { Right } from './catalog.ts';
import { brandRef, countries, nonEmpty, versionFields } from './schemas.ts';

/** A brand on this agent's roster: its registry domain and, when it has one, its brand.json brand id. */
export interface RosterBrand {
  domain: string;
  brand_id?: string;
}

const words = (s: string) => s.toLowerCase().match(/[a-z0-9]{3,}/g) ?? [];

/** What a roster brand offers for licensing (search_brands' `rights` summary), or undefined when it has no rights. */
function rightsSummary(rights: readonly Right[]): Json | undefined {
  if (!rights.length) return undefined;
  const uses = [...new Set(rights.flatMap((r) => r.available_uses))];
  // Worldwide when any right is; otherwise the union of the rights' markets.
  const worldwide = rights.some((r) => !r.countries);
  return { available_uses: uses, ...(worldwide ? {} : { countries: [...new Set(rights.flatMap((r) => r.countries ?? []))] }) };
}

function stub(brand: RosterBrand, p: BrandProfile, rights: readonly Right[]): Json {
  const summary = rightsSummary(rights);
  return {
    brand_id: brand.brand_id ?? brand.domain,
    house: p.house,
    names: p.names.length ? p.names : [{ en: p.name }],
    ...(p.description ? { description: p.description } : {}),
    ...(p.keller_type ? { keller_type: p.keller_type } : {}),
    ...(p.logos.length ? { logos: p.logos.map(({ url, orientation, background, variant }) => ({ url, orientation, background, variant })) } : {}),
    ...(summary ? { rights: summary } : {}),
  };
}

const offsetCursor = v.pipe(v.string(), v.regex(/^o[0-9]{1,6}$/, 'must be a cursor this agent returned'));

/**
 * search_brands: the brands on this agent's roster (identity from the registry through the
 * BrandProfiles port) whose name, description, house or industries match the query's words, best
 * first; a query that matches none lists the roster. Industries and countries (where rights are
 * available) narrow the list. Public identity tier only; get_brand_identity and get_rights follow.
 */
export function searchBrandsTask(roster: readonly RosterBrand[], catalog: readonly Right[], profiles: BrandProfilesPort | undefined, logger: Logger) {
  return defineTask({
    name: 'search_brands',
    description:
      "Find brands on this agent's roster by a natural-language query (name, category, house), optionally in industries or countries with licensable rights. Answers public identity stubs with a rights summary.",
    protocol: 'brand',
    requestSchema: 'brand/search-brands-request.json',
    input: v.looseObject({
      ...versionFields,
      query: v.pipe(v.string('is required'), v.maxLength(2000, 'must be at most 2000 characters')),
      industries: v.optional(v.pipe(v.array(nonEmpty(128)), v.minLength(1, 'must not be empty'), v.maxLength(50, 'accepts at most 50 industries'))),
      countries: v.optional(v.pipe(countries, v.minLength(1, 'must not be empty'))),
      buyer_brand: v.optional(brandRef),
      pagination: v.optional(
        v.looseObject({
          max_results: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, 'must be at least 1'), v.maxValue(100, 'must be at most 100'))),
          cursor: v.optional(offsetCursor),
        }),
      ),
    }),
    async handler({ input }) {
      if (!profiles) throw new ProtocolError('SERVICE_UNAVAILABLE', 'This agent has no brand registry to read', { status: 503, recovery: 'transient' });
      const wanted = new Set(words(input.query));
      const found: { brand: Json; score: number; order: number }[] = [];
      for (const [order, brand] of roster.entries()) {
        let profile: BrandProfile | null;
        try {
          profile = await profiles.get(brand.domain);
        } catch (error) {
          logger.warn({ err: error, domain: brand.domain }, 'brand registry could not be asked');
          throw new ProtocolError('SERVICE_UNAVAILABLE', 'The brand registry cannot be reached; retry later', { status: 503, recovery: 'transient' });
        }
        if (!profile) continue;
        const id = brand.brand_id ?? brand.domain;
        const rights = catalog.filter((r) => r.brand_id === id);
        const industries = profile.industries ?? [];
        if (input.industries && !input.industries.some((i) => industries.some((have) => have === i || have.startsWith(`${i}.`)))) continue;
        if (input.countries && !rights.some((r) => !r.countries || input.countries!.some((c) => r.countries!.includes(c)))) continue;
        const text = new Set(words([profile.name, profile.description ?? '', profile.house.name, ...industries, ...rights.map((r) => r.name)].join(' ')));
        const score = [...wanted].filter((w) => text.has(w)).length;
        found.push({ brand: stub(brand, profile, rights), score, order });
      }
      const matching = found.some((f) => f.score > 0) ? found.filter((f) => f.score > 0) : found;
      matching.sort((a, b) => b.score - a.score || a.order - b.order);
      const offset = input.pagination?.cursor ? Number(input.pagination.cursor.slice(1)) : 0;
      const limit = input.pagination?.max_results ?? 50;
      const page = matching.slice(offset, offset + limit);
      const more = offset + limit < matching.length;
      return {
        brands: page.map((f) => f.brand),
        pagination: { has_more: more, total_count: matching.length, ...(more ? { cursor: `o${offset + limit}` } : {}) },
      };
    },
  });
}
