import { expect, test } from 'bun:test';
import {
  INDEX_SETTINGS,
  buildFilter,
  documentId,
  fromMeiliHit,
  isAfter,
  quote,
  searchParams,
  toMeiliDocument,
  urlKey,
} from '../../plugins/search-meilisearch/translate.ts';
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

test('documents get a URL-derived id, the precomputed base score, the URL sort key and "" for no owner', () => {
  const m = toMeiliDocument(doc);
  expect(m.id).toMatch(/^[a-f0-9]{64}$/);
  expect(m.id).toBe(documentId('https://a.example/mcp'));
  expect(m.base_score).toBe(baseScore(doc));
  expect(m.url_key).toBe(Buffer.from('https://a.example/mcp').toString('hex'));
  expect(m.owner_org_id).toBe('');
});

test('the URL sort key survives Meilisearch normalization and orders as the bytes do (COLLATE "C")', () => {
  const urls = ['https://B.example', 'https://a.example', 'https://a.example/x', 'https://ä.example', 'https://a.example/Z', 'https://a.example/%20'];
  const bytes = [...urls].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const keys = [...urls].sort((a, b) => (urlKey(a) < urlKey(b) ? -1 : urlKey(a) > urlKey(b) ? 1 : 0));
  expect(keys).toEqual(bytes);
  for (const u of urls) expect(urlKey(u)).toBe(urlKey(u).normalize('NFKD').toLowerCase());
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
  const cursor = { s: 0.25, u: 'https://x', q: 'f', n: 4 };
  const params = searchParams({ ...query, viewer: { member: false, orgId: null } }, cursor);
  expect(params.filter.slice(-2)).toEqual(['(visibility = "public")', `(base_score < 0.25 OR (base_score = 0.25 AND url_key > "${urlKey('https://x')}"))`]);
  expect(params.limit).toBe(11);
  expect(params.sort).toEqual(['base_score:desc', 'url_key:asc']);
  // The same keyset in code: strictly after (0.25, https://x).
  expect(isAfter({ base_score: 0.3, url_key: urlKey('https://a') }, cursor)).toBe(false);
  expect(isAfter({ base_score: 0.25, url_key: urlKey('https://x') }, cursor)).toBe(false);
  expect(isAfter({ base_score: 0.25, url_key: urlKey('https://y') }, cursor)).toBe(true);
  expect(isAfter({ base_score: 0.2, url_key: urlKey('https://a') }, cursor)).toBe(true);
});

test('index settings: text relevance rules with sort, every dimension filterable, sort by score then URL key', () => {
  for (const d of SEARCH_DIMENSIONS) expect(INDEX_SETTINGS.filterableAttributes).toContain(d);
  expect(INDEX_SETTINGS.sortableAttributes).toEqual(['base_score', 'url_key']);
  expect(INDEX_SETTINGS.rankingRules).toEqual(['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness']);
  expect(INDEX_SETTINGS.searchableAttributes).not.toContain('url_key');
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
