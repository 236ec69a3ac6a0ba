import { expect, test } from 'bun:test';
import { INDEX_SETTINGS, buildFilter, documentId, fromMeiliHit, quote, searchParams, toMeiliDocument } from '../../plugins/search-meilisearch/translate.ts';
import { SEARCH_DIMENSIONS, baseScore, type AgentProfileDocument } from '../../core/ports/search.ts';

const doc: AgentProfileDocument = {
  agent_url: 'https://a.example/mcp',
  channels: ['display'],
  property_types: ['website'],
  markets: ['US'],
  categories: [],
  tags: [],
  delivery_types: [],
  format_ids: [],
  property_count: 9,
  publisher_count: 2,
  has_tmp: true,
  category_taxonomy: null,
  updated_at: '2026-01-01T00:00:00.000Z',
  visibility: 'private',
  owner_org_id: null,
};

test('documents get a URL-derived id, the precomputed base score and "" for no owner', () => {
  const m = toMeiliDocument(doc);
  expect(m.id).toMatch(/^[a-f0-9]{64}$/);
  expect(m.id).toBe(documentId('https://a.example/mcp'));
  expect(m.base_score).toBe(baseScore(doc));
  expect(m.owner_org_id).toBe('');
});

test('filter strings are quoted and escaped', () => {
  expect(quote('a"b\\c')).toBe('"a\\"b\\\\c"');
});

test('filters: IN per active dimension, has_tmp, min_properties, visibility, cursor score bound', () => {
  const query = { filters: { channels: ['display', 'o"lv'], tags: [] }, has_tmp: true, min_properties: 3, limit: 10, viewer: { member: true, orgId: 'org-1' } };
  expect(buildFilter(query, null)).toEqual([
    'channels IN ["display", "o\\"lv"]',
    'has_tmp = true',
    'property_count >= 3',
    '(visibility = "public" OR visibility = "members_only" OR owner_org_id = "org-1")',
  ]);
  const params = searchParams({ ...query, viewer: { member: false, orgId: null } }, { s: 0.25, u: 'https://x', q: 'f', n: 4 });
  expect(params.filter.slice(-2)).toEqual(['(visibility = "public")', 'base_score <= 0.25']);
  expect(params.offset).toBe(4);
  expect(params.limit).toBe(11);
  expect(params.sort).toEqual(['base_score:desc', 'agent_url:asc']);
});

test('index settings make every dimension filterable and sort by score then URL', () => {
  for (const d of SEARCH_DIMENSIONS) expect(INDEX_SETTINGS.filterableAttributes).toContain(d);
  expect(INDEX_SETTINGS.sortableAttributes).toEqual(['base_score', 'agent_url']);
});

test('hits map back to the port shape with the same score formula', () => {
  const hit = fromMeiliHit(toMeiliDocument(doc), {
    filters: { channels: ['display'], markets: ['US', 'DE'] },
    limit: 1,
    viewer: { member: false, orgId: null },
  });
  expect(hit.matched_filters).toEqual(['channels', 'markets']);
  expect(hit.relevance_score).toBe(1 + baseScore(doc));
  expect(hit).not.toHaveProperty('visibility');
});
