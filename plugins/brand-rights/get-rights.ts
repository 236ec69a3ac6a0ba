import * as v from 'valibot';
import { defineTask, type Json } from '../../core/task.ts';
import { matchRights } from './catalog.ts';
import type { RightsDeps } from './deps.ts';
import { renderRight } from './render.ts';
import { brandRef, countries, nonEmpty, rightType, rightUses, versionFields } from './schemas.ts';

/** get_rights: the represented brands' licensable rights that cover the requested uses, best match first, with their pricing options. */
export function getRightsTask(deps: RightsDeps) {
  return defineTask({
    name: 'get_rights',
    description:
      'Licensable rights of the brands this agent represents (talent, brand IP, music) covering the requested uses, best match first, each with its pricing options.',
    protocol: 'brand',
    requestSchema: 'brand/get-rights-request.json',
    input: v.looseObject({
      ...versionFields,
      query: v.pipe(v.string('is required'), v.maxLength(2000, 'must be at most 2000 characters')),
      uses: rightUses,
      buyer_brand: v.optional(brandRef),
      countries: v.optional(countries),
      brand_id: v.optional(nonEmpty(253)),
      right_type: v.optional(rightType),
      include_excluded: v.optional(v.boolean()),
      pagination: v.optional(
        v.looseObject({
          max_results: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, 'must be at least 1'), v.maxValue(100, 'must be at most 100'))),
          cursor: v.optional(v.pipe(v.string(), v.maxLength(256))),
        }),
      ),
    }),
    handler({ input }) {
      const matches = matchRights(deps.catalog, {
        uses: input.uses,
        brand_id: input.brand_id?.toLowerCase(),
        right_type: input.right_type,
        countries: input.countries,
      });
      const limit = input.pagination?.max_results ?? 50;
      const rights = matches
        .slice(0, limit)
        .map(({ right, score, matched }) => renderRight(right, score, [`covers ${matched.join(', ')} of the requested uses`]));
      const body: Json = { rights };
      if (input.include_excluded) body.excluded = [];
      return body;
    },
  });
}
