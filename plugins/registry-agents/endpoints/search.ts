import * as v from 'valibot';
import { defineEndpoint, qBool, qCsv, qInt } from '../../../core/endpoint.ts';
import { ProtocolError } from '../../../core/errors.ts';
import { SEARCH_DIMENSIONS } from '../../../core/ports/search.ts';
import { viewerOf, type DiscoveryContext } from '../context.ts';
import { searchOut } from '../responses.ts';

const searchQuery = v.object({
  channels: qCsv(100, 100),
  property_types: qCsv(100, 100),
  markets: qCsv(100, 100),
  categories: qCsv(100, 100),
  tags: qCsv(100, 100),
  delivery_types: qCsv(100, 100),
  has_tmp: qBool(),
  min_properties: qInt(0, 1_000_000_000),
  limit: qInt(1, 200, 50),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(2048, 'is too long'))),
});

export function searchEndpoints(c: DiscoveryContext) {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/api/registry/agents/search',
      tool: 'search_agents',
      success: { schema: searchOut },
      summary: 'Agent inventory-profile search',
      description:
        'CSV filters (at most 100 values each) are ORed within a dimension and ANDed across dimensions. Ranked by relevance_score = matched/active dimensions + 0.1*ln(property_count+1) + 0.05*has_tmp, then agent_url; the opaque cursor pages exactly that order.',
      tags: ['Agent discovery'],
      auth: 'required',
      query: searchQuery,
      errors: [400, 401, 503],
      async handler({ query, principal }) {
        const search = c.search;
        if (!search) throw new ProtocolError('SERVICE_UNAVAILABLE', 'No search adapter is configured');
        const filters: Record<string, string[]> = {};
        for (const d of SEARCH_DIMENSIONS) if (query[d]?.length) filters[d] = query[d]!;
        return search.search({
          filters,
          has_tmp: query.has_tmp,
          min_properties: query.min_properties,
          limit: query.limit!,
          cursor: query.cursor ?? null,
          viewer: viewerOf(principal),
        });
      },
    }),
  ];
}
