import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createMeilisearchSearch } from '../../plugins/search-meilisearch/index.ts';
import { INDEX_SETTINGS } from '../../plugins/search-meilisearch/translate.ts';
import { baseScore, type AgentProfileDocument, type AgentSearchQuery } from '../../core/ports/search.ts';

// The Meilisearch adapter against a stand-in server on loopback that speaks the few routes the
// client uses (the real server runs the contract suite when MEILISEARCH_URL is set). The stand-in
// ignores filters on purpose: the adapter must still page exactly, because it checks the keyset
// cursor in code too.

interface Recorded {
  method: string;
  path: string;
  body: unknown;
}

const requests: Recorded[] = [];
const docs = new Map<string, Record<string, any>>();
const tasks: Array<{ status: 'succeeded' | 'failed'; error: { code: string; message: string } | null }> = [];
let failNextSettings = false;
let indexExists = false;
let server: ReturnType<typeof Bun.serve>;

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
function enqueue(error: { code: string; message: string } | null = null) {
  tasks.push({ status: error ? 'failed' : 'succeeded', error });
  return json({ taskUid: tasks.length - 1, indexUid: 'agents', status: 'enqueued', type: 'x', enqueuedAt: '2026-01-01T00:00:00Z' }, 202);
}

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.method === 'GET' || req.method === 'DELETE' ? undefined : await req.json().catch(() => undefined);
      const path = url.pathname;
      if (!path.startsWith('/tasks/')) requests.push({ method: req.method, path, body });
      let m: RegExpExecArray | null;
      if ((m = /^\/tasks\/(\d+)$/.exec(path))) {
        const t = tasks[Number(m[1])]!;
        return json({ uid: Number(m[1]), indexUid: 'agents', status: t.status, type: 'x', error: t.error });
      }
      if (path === '/indexes' && req.method === 'POST') {
        if (indexExists) return enqueue({ code: 'index_already_exists', message: 'exists' });
        indexExists = true;
        return enqueue();
      }
      if (path === '/indexes/agents/settings' && req.method === 'PATCH') {
        if (failNextSettings) {
          failNextSettings = false;
          return enqueue({ code: 'invalid_settings', message: 'refused (test)' });
        }
        return enqueue();
      }
      if (path === '/indexes/agents/documents' && req.method === 'POST') {
        for (const d of body as Array<Record<string, any>>) docs.set(d.id, d);
        return enqueue();
      }
      if (path === '/indexes/agents/documents' && req.method === 'DELETE') {
        docs.clear();
        return enqueue();
      }
      if ((m = /^\/indexes\/agents\/documents\/([\w-]+)$/.exec(path)) && req.method === 'GET') {
        const d = docs.get(m[1]!);
        return d ? json(d) : json({ message: 'not found', code: 'document_not_found', type: 'invalid_request', link: '' }, 404);
      }
      if (path === '/indexes/agents/search' && req.method === 'POST') {
        const q = body as { sort: string[]; offset: number; limit: number };
        expect(q.sort).toEqual(['base_score:desc', 'url_key:asc']);
        const all = [...docs.values()]
          .filter((d) => d.visibility !== 'stamp')
          .sort((a, b) => b.base_score - a.base_score || (a.url_key < b.url_key ? -1 : a.url_key > b.url_key ? 1 : 0));
        return json({
          hits: all.slice(q.offset, q.offset + q.limit),
          offset: q.offset,
          limit: q.limit,
          estimatedTotalHits: all.length,
          processingTimeMs: 0,
          query: '',
        });
      }
      return json({ message: `no route ${req.method} ${path}`, code: 'not_found', type: 'invalid_request', link: '' }, 404);
    },
  });
});
afterAll(() => server.stop(true));

const make = () => createMeilisearchSearch({ url: `http://127.0.0.1:${server.port}`, index: 'agents', taskTimeoutMs: 5000 });

function doc(url: string, propertyCount: number): AgentProfileDocument {
  return {
    agent_url: url,
    channels: ['display'],
    property_types: [],
    markets: [],
    categories: [],
    tags: [],
    delivery_types: [],
    format_ids: [],
    property_count: propertyCount,
    publisher_count: 0,
    has_tmp: false,
    category_taxonomy: null,
    updated_at: '2026-01-01T00:00:00.000Z',
    visibility: 'public',
    owner_org_id: null,
  };
}

test('no request at construction; the index and its settings on first use, once; again after a failure', async () => {
  const search = make();
  expect(requests).toEqual([]);
  failNextSettings = true;
  expect(await search.stamp().catch((e) => e)).toBeInstanceOf(Error);
  expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /indexes', 'PATCH /indexes/agents/settings']);
  requests.length = 0;
  // The next call makes the index (already there: fine) and applies the settings again.
  expect(await search.stamp()).toBeNull();
  expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
    'POST /indexes',
    'PATCH /indexes/agents/settings',
    'GET /indexes/agents/documents/index-stamp',
  ]);
  expect(requests[1]!.body).toEqual(JSON.parse(JSON.stringify(INDEX_SETTINGS)));
  requests.length = 0;
  await search.setStamp({ generation: 'g1', version: 3 });
  expect(await search.stamp()).toEqual({ generation: 'g1', version: 3 });
  expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /indexes/agents/documents', 'GET /indexes/agents/documents/index-stamp']);
});

test('a server whose cursor filter lets rows through still pages every document once, in order', async () => {
  const search = make();
  await search.clear();
  // 3 distinct scores over 40 agents: long tie groups.
  const all = Array.from({ length: 40 }, (_, i) => doc(`https://agent-${String((i * 7) % 40).padStart(2, '0')}.example/${i % 2 ? 'A' : 'b'}`, i % 3));
  await search.upsert(all);
  const stored = [...docs.values()].find((d) => d.agent_url === all[0]!.agent_url)!;
  expect(stored.url_key).toBe(Buffer.from(all[0]!.agent_url).toString('hex'));
  const expected = [...all]
    .sort((a, b) => baseScore(b) - baseScore(a) || Buffer.compare(Buffer.from(a.agent_url), Buffer.from(b.agent_url)))
    .map((d) => d.agent_url);
  for (const limit of [1, 3, 7, 40]) {
    const seen: string[] = [];
    let cursor: string | null = null;
    const query: AgentSearchQuery = { filters: {}, limit, viewer: { member: false, orgId: null } };
    for (let guard = 0; guard < 100; guard++) {
      const page = await search.search({ ...query, cursor });
      seen.push(...page.results.map((r) => r.agent_url));
      if (!page.has_more) break;
      cursor = page.cursor;
    }
    expect({ limit, seen }).toEqual({ limit, seen: expected });
  }
  // The cursor filter itself is the keyset of the Postgres adapter.
  const page = await search.search({ filters: {}, limit: 5, viewer: { member: false, orgId: null } });
  requests.length = 0;
  await search.search({ filters: {}, limit: 5, cursor: page.cursor, viewer: { member: false, orgId: null } });
  const filter = (requests[0]!.body as { filter: string[] }).filter;
  expect(filter.at(-1)).toMatch(/^\(base_score < [\d.]+ OR \(base_score = [\d.]+ AND url_key > "[0-9a-f]+"\)\)$/);
});
