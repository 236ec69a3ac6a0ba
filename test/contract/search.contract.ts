import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ProtocolError } from '../../core/errors.ts';
import { baseScore, type AgentProfileDocument, type AgentSearchQuery, type SearchPort, type SearchViewer } from '../../core/ports/search.ts';

// The search port contract (core/ports/search.ts), written once and run against every adapter.

const anyone: SearchViewer = { member: false, orgId: null };
const member: SearchViewer = { member: true, orgId: null };
const ORG = '0190a0a0-0000-7000-8000-000000000001';

function doc(url: string, over: Partial<AgentProfileDocument> = {}): AgentProfileDocument {
  return {
    agent_url: url,
    channels: [],
    property_types: [],
    markets: [],
    categories: [],
    tags: [],
    delivery_types: [],
    format_ids: [],
    property_count: 0,
    publisher_count: 0,
    has_tmp: false,
    category_taxonomy: null,
    updated_at: '2026-01-01T00:00:00.000Z',
    visibility: 'public',
    owner_org_id: null,
    ...over,
  };
}

const q = (over: Partial<AgentSearchQuery> = {}): AgentSearchQuery => ({ filters: {}, limit: 50, viewer: anyone, ...over });

/** Expected total order: base score descending, then agent_url ascending (code units = bytes for ASCII). */
const expectedOrder = (docs: AgentProfileDocument[]) =>
  [...docs].sort((a, b) => baseScore(b) - baseScore(a) || (a.agent_url < b.agent_url ? -1 : a.agent_url > b.agent_url ? 1 : 0)).map((d) => d.agent_url);

async function allPages(search: SearchPort, query: AgentSearchQuery): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 5000; guard++) {
    const page = await search.search({ ...query, cursor });
    seen.push(...page.results.map((r) => r.agent_url));
    if (!page.has_more) return seen;
    expect(page.results.length).toBe(query.limit);
    cursor = page.cursor;
  }
  throw new Error('paging did not terminate');
}

export interface SearchSubject {
  port: SearchPort;
  close(): Promise<void>;
}

export function searchContract(name: string, make: () => Promise<SearchSubject>): void {
  describe(`search contract: ${name}`, () => {
    let subject: SearchSubject;
    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await subject?.close();
    });
    searchTests(() => subject.port);
  });
}

function searchTests(get: () => SearchPort) {
  const search = () => get();
  const base = [
    doc('https://a.example/mcp', { channels: ['display', 'olv'], markets: ['US'], property_count: 10, has_tmp: true }),
    doc('https://b.example/mcp', { channels: ['display'], markets: ['DE'], property_count: 10 }),
    doc('https://c.example/mcp', { channels: ['audio'], markets: ['US'], tags: ['news'], property_count: 3 }),
    doc('https://d.example/mcp', { channels: ['display'], markets: ['US'], visibility: 'members_only', property_count: 1 }),
    doc('https://e.example/mcp', { channels: ['display'], markets: ['US'], visibility: 'private', owner_org_id: ORG, property_count: 1 }),
  ];

  test('upsert then search ranks by score, then agent_url', async () => {
    await search().clear();
    await search().upsert(base);
    const page = await search().search(q());
    expect(page.results.map((r) => r.agent_url)).toEqual(expectedOrder(base.slice(0, 3)));
    expect(page.has_more).toBe(false);
    expect(page.cursor).toBeNull();
    const a = page.results[0]!;
    expect(a.relevance_score).toBeCloseTo(0 + 0.1 * Math.log(11) + 0.05, 12);
    expect(a.matched_filters).toEqual([]);
    expect(a).not.toHaveProperty('visibility');
  });

  test('OR within a dimension, AND across dimensions, with score and matched_filters', async () => {
    const page = await search().search(q({ filters: { channels: ['display', 'audio'], markets: ['US'] } }));
    expect(page.results.map((r) => r.agent_url)).toEqual(['https://a.example/mcp', 'https://c.example/mcp']);
    for (const r of page.results) {
      expect(r.matched_filters).toEqual(['channels', 'markets']);
      expect(r.relevance_score).toBeCloseTo(1 + 0.1 * Math.log(r.property_count + 1) + (r.has_tmp ? 0.05 : 0), 12);
    }
    const none = await search().search(q({ filters: { channels: ['display'], tags: ['news'] } }));
    expect(none.results).toEqual([]);
  });

  test('has_tmp and min_properties filter', async () => {
    expect((await search().search(q({ has_tmp: true }))).results.map((r) => r.agent_url)).toEqual(['https://a.example/mcp']);
    expect((await search().search(q({ min_properties: 5 }))).results.map((r) => r.agent_url)).toEqual(['https://a.example/mcp', 'https://b.example/mcp']);
    expect((await search().search(q({ has_tmp: false }))).results).toHaveLength(3);
  });

  test('visibility: members also see members_only, the owner also sees private', async () => {
    const urls = async (viewer: SearchViewer) =>
      (await search().search(q({ viewer, filters: { channels: ['display'] } }))).results.map((r) => r.agent_url).sort();
    expect(await urls(anyone)).toEqual(['https://a.example/mcp', 'https://b.example/mcp']);
    expect(await urls(member)).toEqual(['https://a.example/mcp', 'https://b.example/mcp', 'https://d.example/mcp']);
    expect(await urls({ member: false, orgId: ORG })).toEqual(['https://a.example/mcp', 'https://b.example/mcp', 'https://e.example/mcp']);
  });

  test('upsert replaces a document, remove deletes it, both idempotent', async () => {
    await search().upsert([doc('https://b.example/mcp', { channels: ['ctv'], property_count: 0 })]);
    await search().upsert([doc('https://b.example/mcp', { channels: ['ctv'], property_count: 0 })]);
    expect((await search().search(q({ filters: { channels: ['ctv'] } }))).results.map((r) => r.property_count)).toEqual([0]);
    expect((await search().search(q({ filters: { channels: ['display'] } }))).results.map((r) => r.agent_url)).toEqual(['https://a.example/mcp']);
    await search().remove(['https://b.example/mcp']);
    await search().remove(['https://b.example/mcp', 'https://never.example']);
    expect((await search().search(q({ filters: { channels: ['ctv'] } }))).results).toEqual([]);
  });

  test('a malformed cursor, or one from another query, is INVALID_REQUEST on field cursor', async () => {
    for (const cursor of ['%%%', 'bm90LWEtY3Vyc29y', Buffer.from('[1,"u","x",1]').toString('base64url')]) {
      const error = await search()
        .search(q({ cursor }))
        .catch((e) => e);
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error.code).toBe('INVALID_REQUEST');
      expect(error.field).toBe('cursor');
    }
  });

  test('stamp: none on a cleared index, read back as set, overwritten, never a search result, gone with clear', async () => {
    await search().clear();
    expect(await search().stamp()).toBeNull();
    await search().upsert([doc('https://s.example/mcp', { channels: ['display'] })]);
    await search().setStamp({ generation: '0190a0a0-0000-7000-8000-00000000aaaa', version: 7 });
    await search().setStamp({ generation: '0190a0a0-0000-7000-8000-00000000bbbb', version: 9_007_199_254 });
    expect(await search().stamp()).toEqual({ generation: '0190a0a0-0000-7000-8000-00000000bbbb', version: 9_007_199_254 });
    for (const viewer of [anyone, member, { member: true, orgId: ORG }]) {
      expect((await search().search(q({ viewer }))).results.map((r) => r.agent_url)).toEqual(['https://s.example/mcp']);
    }
    await search().clear();
    expect(await search().stamp()).toBeNull();
    expect((await search().search(q())).results).toEqual([]);
  });

  test('paging: 1,000 documents with many equal scores, every page size 1..50 yields each exactly once, in order', async () => {
    await search().clear();
    // Only 8 distinct scores (property_count 0..3 x has_tmp), so ties are the norm.
    const docs = Array.from({ length: 1000 }, (_, i) =>
      doc(`https://agent-${String((i * 7919) % 1000).padStart(4, '0')}.example/${i % 3 === 0 ? 'mcp' : 'a2a'}`, {
        channels: ['display'],
        property_count: i % 4,
        has_tmp: i % 5 === 0,
      }),
    );
    await search().upsert(docs);
    const expected = expectedOrder(docs);
    for (let size = 1; size <= 50; size++) {
      const seen = await allPages(search(), q({ limit: size, filters: { channels: ['display'] } }));
      if (seen.length !== expected.length || seen.some((u, i) => u !== expected[i])) {
        expect({ size, seen: seen.length, unique: new Set(seen).size }).toEqual({ size, seen: expected.length, unique: expected.length });
        expect(seen).toEqual(expected);
      }
    }
    // One explicit assertion so the test states what it proved.
    expect(new Set(await allPages(search(), q({ limit: 7, filters: { channels: ['display'] } }))).size).toBe(1000);
  }, 120_000);
}
