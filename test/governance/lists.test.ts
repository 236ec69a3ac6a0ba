import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, HOSTS, restClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { ACME, key, NOVA, OTHER_TOKEN, startListsServer, TOKEN, type ListsServer } from './lists-fixture.ts';

// Property and collection lists over the three hosts: the storyboards' lifecycle, every answer valid
// against AdCP 3.0.6 (where it defines the task) and 3.1.19.
const ids = (...domains: string[]) => domains.map((value) => ({ type: 'domain', value }));
const P = (f: string) => `property/${f}.json`;
const C = (f: string) => `collection/${f}.json`;

forEachDatabase<ListsServer>(
  'governance lists matrix',
  (adapter, schema) => startListsServer(adapter, schema, { webhooks: false }),
  (s) => s.server.close(),
  (get) => {
    for (const host of HOSTS) {
      test(`${host}: property list lifecycle (create, list, get resolved, update, validate delivery, delete)`, async () => {
        const c = await clientFor(host, get().server, TOKEN);
        const create = {
          account: ACME,
          brand: { domain: 'acmeoutdoor.example' },
          name: `Acme approved ${host}`,
          base_properties: [{ selection_type: 'identifiers', identifiers: ids('outdoormagazine.example', 'hikingtrails.example', '*.campinggear.example') }],
          filters: { exclude_identifiers: ids('hikingtrails.example') },
          idempotency_key: key(),
          context: { correlation_id: `create-${host}` },
        };
        expect(bothVersionsErrors(P('create-property-list-request'), create)).toEqual([]);
        const created = await c.call('create_property_list', create);
        expect(created.ok).toBe(true);
        expect(bothVersionsErrors(P('create-property-list-response'), created.body)).toEqual([]);
        expect(created.body.context).toEqual({ correlation_id: `create-${host}` });
        expect(created.body.auth_token).toMatch(/^glt_[A-Za-z0-9_-]{43}$/);
        const list = created.body.list;
        expect(list).toMatchObject({ name: `Acme approved ${host}`, property_count: 2, cache_duration_hours: 24, brand: { domain: 'acmeoutdoor.example' } });
        expect(list.account.account_id).toMatch(/^acc_/);
        expect(list.list_id).toMatch(/^pl_/);

        const listed = await c.call('list_property_lists', { account: ACME, name_contains: `approved ${host.toUpperCase()}` });
        expect(bothVersionsErrors(P('list-property-lists-response'), listed.body)).toEqual([]);
        expect(listed.body.lists.map((l: any) => l.list_id)).toEqual([list.list_id]);
        expect(listed.body.pagination).toEqual({ has_more: false, total_count: 1 });

        const got = await c.call('get_property_list', { list_id: list.list_id, account: ACME });
        expect(bothVersionsErrors(P('get-property-list-response'), got.body)).toEqual([]);
        expect(got.body.identifiers).toEqual(ids('outdoormagazine.example', '*.campinggear.example'));
        expect(got.body.pagination).toEqual({ has_more: false, total_count: 2 });
        expect(got.body.resolved_at).toBe('2026-03-02T00:00:00.000Z');
        expect(got.body.cache_valid_until).toBe('2026-03-03T00:00:00.000Z');
        const bare = await c.call('get_property_list', { list_id: list.list_id, resolve: false });
        expect(bare.body.identifiers).toBeUndefined();
        expect(bare.body.list.list_id).toBe(list.list_id);

        const update = {
          list_id: list.list_id,
          account: ACME,
          base_properties: [{ selection_type: 'identifiers', identifiers: ids('outdoormagazine.example', 'mountaineering.example') }],
          filters: {},
          idempotency_key: key(),
        };
        expect(bothVersionsErrors(P('update-property-list-request'), update)).toEqual([]);
        const updated = await c.call('update_property_list', update);
        expect(bothVersionsErrors(P('update-property-list-response'), updated.body)).toEqual([]);
        expect(updated.body.list).toMatchObject({ list_id: list.list_id, name: `Acme approved ${host}`, property_count: 2 });

        const validate = {
          account: ACME,
          list_id: list.list_id,
          records: [
            { record_id: 'r1', identifier: { type: 'domain', value: 'www.outdoormagazine.example' }, impressions: 50_000 },
            { record_id: 'r2', identifier: { type: 'domain', value: 'randomsite.example' }, impressions: 200 },
          ],
        };
        expect(bothVersionsErrors(P('validate-property-delivery-request'), validate)).toEqual([]);
        const checked = await c.call('validate_property_delivery', validate);
        expect(bothVersionsErrors(P('validate-property-delivery-response'), checked.body)).toEqual([]);
        expect(checked.body.compliant).toBe(false);
        expect(checked.body.summary).toMatchObject({ total_records: 2, total_impressions: 50_200, compliant_records: 1, non_compliant_impressions: 200 });
        expect(checked.body.results).toHaveLength(1);
        expect(checked.body.results[0]).toMatchObject({
          record_id: 'r2',
          status: 'non_compliant',
          features: [{ feature_id: 'list_membership', status: 'failed' }],
        });
        const all = await c.call('validate_property_delivery', { ...validate, records: validate.records.slice(0, 1), include_compliant: true });
        expect(all.body.compliant).toBe(true);
        expect(all.body.results).toEqual([
          { identifier: { type: 'domain', value: 'www.outdoormagazine.example' }, record_id: 'r1', status: 'compliant', impressions: 50_000 },
        ]);

        const deleted = await c.call('delete_property_list', { list_id: list.list_id, account: ACME, idempotency_key: key() });
        expect(bothVersionsErrors(P('delete-property-list-response'), deleted.body)).toEqual([]);
        expect(deleted.body).toMatchObject({ deleted: true, list_id: list.list_id });
        const gone = await c.call('get_property_list', { list_id: list.list_id });
        expect(gone.ok).toBe(false);
        expect(gone.body.adcp_error).toMatchObject({ code: 'REFERENCE_NOT_FOUND', field: 'list_id' });
        await c.close();
      });

      test(`${host}: collection list lifecycle`, async () => {
        const c = await clientFor(host, get().server, TOKEN);
        const imdb = (...v: string[]) => v.map((value) => ({ type: 'imdb_id', value }));
        const create = {
          account: NOVA,
          name: `Nova programs ${host}`,
          base_collections: [{ selection_type: 'distribution_ids', identifiers: imdb('tt9999901', 'tt9999902', 'tt9999903') }],
          filters: { kinds: ['series'], exclude_distribution_ids: imdb('tt9999903') },
          idempotency_key: key(),
        };
        expect(bothVersionsErrors(C('create-collection-list-request'), create)).toEqual([]);
        const created = await c.call('create_collection_list', create);
        expect(bothVersionsErrors(C('create-collection-list-response'), created.body)).toEqual([]);
        expect(created.body.list).toMatchObject({ collection_count: 2, cache_duration_hours: 168 });
        const listId = created.body.list.list_id;
        expect(listId).toMatch(/^cl_/);

        const got = await c.call('get_collection_list', { list_id: listId, resolve: true, account: NOVA });
        expect(bothVersionsErrors(C('get-collection-list-response'), got.body)).toEqual([]);
        expect(got.body.collections).toEqual([
          { name: 'imdb_id tt9999901', distribution_ids: imdb('tt9999901') },
          { name: 'imdb_id tt9999902', distribution_ids: imdb('tt9999902') },
        ]);
        // `kinds` cannot be judged for programs the agent holds no data on: kept, and said so.
        expect(got.body.coverage_gaps).toEqual({ kinds: imdb('tt9999901', 'tt9999902') });

        const listed = await c.call('list_collection_lists', { account: NOVA, name_contains: 'nova programs' });
        expect(bothVersionsErrors(C('list-collection-lists-response'), listed.body)).toEqual([]);
        expect(listed.body.lists.map((l: any) => l.list_id)).toContain(listId);

        const updated = await c.call('update_collection_list', {
          list_id: listId,
          account: NOVA,
          base_collections: [{ selection_type: 'distribution_ids', identifiers: imdb('tt9999901', 'tt9999904', 'tt9999905', 'tt9999906') }],
          idempotency_key: key(),
        });
        expect(bothVersionsErrors(C('update-collection-list-response'), updated.body)).toEqual([]);
        expect(updated.body.list.collection_count).toBe(4);

        const deleted = await c.call('delete_collection_list', { list_id: listId, account: NOVA, idempotency_key: key() });
        expect(bothVersionsErrors(C('delete-collection-list-response'), deleted.body)).toEqual([]);
        expect(deleted.body).toMatchObject({ deleted: true, list_id: listId });
        await c.close();
      });
    }

    test('another organization, or another account of the owner, does not find a list', async () => {
      const mine = restClient(get().server, TOKEN);
      const theirs = restClient(get().server, OTHER_TOKEN);
      const created = await mine.call('create_property_list', { account: ACME, name: 'Private list', idempotency_key: key() });
      const listId = created.body.list.list_id;
      for (const [name, args] of [
        ['get_property_list', { list_id: listId }],
        ['update_property_list', { list_id: listId, name: 'Stolen', idempotency_key: key() }],
        ['delete_property_list', { list_id: listId, idempotency_key: key() }],
        ['validate_property_delivery', { list_id: listId, records: [{ identifier: ids('a.example')[0], impressions: 1 }] }],
      ] as const) {
        const r = await theirs.call(name, args);
        expect(r.ok).toBe(false);
        expect(r.body.adcp_error).toMatchObject({ code: 'REFERENCE_NOT_FOUND', field: 'list_id' });
      }
      // The same natural key names a different account for another organization.
      const listed = await theirs.call('list_property_lists', { account: ACME });
      expect(listed.body).toMatchObject({ lists: [], pagination: { has_more: false, total_count: 0 } });
      // The owner naming another of its accounts does not reach the list either.
      const other = await mine.call('get_property_list', {
        list_id: listId,
        account: { brand: { domain: 'other.example' }, operator: 'pinnacle-agency.example' },
      });
      expect(other.body.adcp_error.code).toBe('REFERENCE_NOT_FOUND');
      expect((await mine.call('get_property_list', { list_id: listId, account: ACME })).ok).toBe(true);
      expect((await mine.call('get_property_list', { list_id: listId, account: created.body.list.account })).ok).toBe(true);
    });

    test('list_property_lists pages with a cursor; name_contains and account narrow it', async () => {
      const c = restClient(get().server, OTHER_TOKEN);
      const account = { brand: { domain: 'paging.example' }, operator: 'agency.example' };
      const made: string[] = [];
      for (const name of ['News one', 'Sports two', 'News three', 'News four', 'Gaming five']) {
        made.push((await c.call('create_property_list', { account, name, idempotency_key: key() })).body.list.list_id);
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await c.call('list_property_lists', { account, pagination: { max_results: 2, ...(cursor ? { cursor } : {}) } });
        expect(bothVersionsErrors(P('list-property-lists-response'), page.body)).toEqual([]);
        expect(page.body.pagination.total_count).toBe(5);
        expect(page.body.pagination.has_more).toBe(page.body.pagination.cursor !== undefined);
        seen.push(...page.body.lists.map((l: any) => l.list_id));
        cursor = page.body.pagination.cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(made);
      const news = await c.call('list_property_lists', { account, name_contains: 'news', pagination: { max_results: 2 } });
      expect(news.body.lists.map((l: any) => l.name)).toEqual(['News one', 'News three']);
      expect(news.body.pagination).toMatchObject({ has_more: true, total_count: 3 });
      // A cursor belongs to its query.
      const foreign = await c.call('list_property_lists', { account, pagination: { cursor: news.body.pagination.cursor } });
      expect(foreign.body.adcp_error).toMatchObject({ code: 'INVALID_REQUEST', field: 'pagination.cursor' });
      const unknown = await c.call('list_property_lists', { account: { account_id: 'acc_nope' } });
      expect(unknown.body.lists).toEqual([]);
    });

    test('get_property_list pages resolved identifiers', async () => {
      const c = restClient(get().server, TOKEN);
      const many = Array.from({ length: 5 }, (_, i) => ({ type: 'domain', value: `site${i}.example` }));
      const { list } = (
        await c.call('create_property_list', {
          account: ACME,
          name: 'Five',
          base_properties: [{ selection_type: 'identifiers', identifiers: many }],
          idempotency_key: key(),
        })
      ).body;
      const first = await c.call('get_property_list', { list_id: list.list_id, pagination: { max_results: 3 } });
      expect(first.body.identifiers).toEqual(many.slice(0, 3));
      expect(first.body.pagination).toMatchObject({ has_more: true, total_count: 5 });
      const second = await c.call('get_property_list', { list_id: list.list_id, pagination: { max_results: 3, cursor: first.body.pagination.cursor } });
      expect(second.body.identifiers).toEqual(many.slice(3));
      expect(second.body.pagination).toEqual({ has_more: false, total_count: 5 });
    });

    test('bad input is INVALID_REQUEST naming the field (REST 400), never a 500', async () => {
      const s = get().server;
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['create_property_list', { account: ACME, idempotency_key: key() }, 'name'],
        ['create_property_list', { account: ACME, name: '', idempotency_key: key() }, 'name'],
        [
          'create_property_list',
          { account: ACME, name: 'x', base_properties: [{ selection_type: 'everything' }], idempotency_key: key() },
          'base_properties[0]',
        ],
        [
          'create_property_list',
          {
            account: ACME,
            name: 'x',
            base_properties: [{ selection_type: 'identifiers', identifiers: [{ type: 'url', value: 'x' }] }],
            idempotency_key: key(),
          },
          'base_properties[0].identifiers[0].type',
        ],
        ['create_property_list', { account: ACME, name: 'x', filters: { channels_any: ['telepathy'] }, idempotency_key: key() }, 'filters.channels_any[0]'],
        ['create_property_list', { account: { brand: { domain: 'ACME' }, operator: 'x.example' }, name: 'x', idempotency_key: key() }, 'account'],
        [
          'create_collection_list',
          {
            account: NOVA,
            name: 'x',
            base_collections: [{ selection_type: 'distribution_ids', identifiers: [{ type: 'imdb', value: '1' }] }],
            idempotency_key: key(),
          },
          'base_collections[0].identifiers[0].type',
        ],
        ['update_property_list', { list_id: 'pl_x', webhook_url: 'ftp://x.example/hook', idempotency_key: key() }, 'webhook_url'],
        ['get_property_list', { list_id: 'pl x' }, 'list_id'],
        ['get_property_list', { list_id: 'pl_x', pagination: { max_results: 0 } }, 'pagination.max_results'],
        ['list_property_lists', { pagination: { max_results: 101 } }, 'pagination.max_results'],
        ['list_property_lists', { pagination: { cursor: 'not a cursor!' } }, 'pagination.cursor'],
        ['validate_property_delivery', { list_id: 'pl_x', records: [] }, 'records'],
        [
          'validate_property_delivery',
          { list_id: 'pl_x', records: [{ identifier: { type: 'domain', value: 'a.example' }, impressions: -1 }] },
          'records[0].impressions',
        ],
      ];
      for (const [name, args, field] of cases) {
        const res = await s.fetch(`/tasks/${name}`, { method: 'POST', json: args, token: TOKEN });
        const body = (await res.json()) as any;
        expect([name, field, res.status]).toEqual([name, field, 400]);
        expect(body.adcp_error.code).toBe('INVALID_REQUEST');
        expect(body.adcp_error.field).toStartWith(field);
      }
      // Mutating tasks want an idempotency_key.
      const keyless = await s.fetch('/tasks/create_property_list', { method: 'POST', json: { account: ACME, name: 'x' }, token: TOKEN });
      expect(keyless.status).toBe(400);
      // Without an account: a caller with none is told to name one; with several, must name one.
      const fresh = await s.fetch('/tasks/create_property_list', { method: 'POST', json: { name: 'x', idempotency_key: key() }, token: OTHER_TOKEN });
      const freshBody = (await fresh.json()) as any;
      if (freshBody.adcp_error) expect(freshBody.adcp_error).toMatchObject({ field: 'account' });
      for (const account of [ACME, NOVA]) await restClient(s, TOKEN).call('create_property_list', { account, name: 'seed', idempotency_key: key() });
      const ambiguous = await s.fetch('/tasks/create_property_list', { method: 'POST', json: { name: 'x', idempotency_key: key() }, token: TOKEN });
      expect(((await ambiguous.json()) as any).adcp_error).toMatchObject({ code: 'ACCOUNT_AMBIGUOUS', field: 'account' });
    });

    test('a replayed create answers the same list (replayed: true) and creates nothing more', async () => {
      const c = restClient(get().server, TOKEN);
      const account = { brand: { domain: 'replay.example' }, operator: 'agency.example' };
      const request = { account, name: 'Replayed', idempotency_key: key() };
      const first = await c.call('create_property_list', request);
      const again = await c.call('create_property_list', request);
      expect(again.body.list.list_id).toBe(first.body.list.list_id);
      expect(again.body.auth_token).toBe(first.body.auth_token);
      expect(again.body.replayed).toBe(true);
      expect(bothVersionsErrors(P('create-property-list-response'), again.body)).toEqual([]);
      expect((await c.call('list_property_lists', { account })).body.lists).toHaveLength(1);
      // The same key with another payload is a conflict.
      const changed = await c.call('create_property_list', { ...request, name: 'Other' });
      expect(changed.body.adcp_error.code).toBe('IDEMPOTENCY_CONFLICT');
    });

    test("a list's auth_token lets a seller read it, with or without its own credential; deletion revokes it", async () => {
      const s = get().server;
      const owner = restClient(s, TOKEN);
      const created = await owner.call('create_property_list', {
        account: ACME,
        name: 'Shared with sellers',
        base_properties: [{ selection_type: 'identifiers', identifiers: ids('shared.example') }],
        idempotency_key: key(),
      });
      const { list, auth_token } = created.body;
      for (const seller of [restClient(s, null), restClient(s, OTHER_TOKEN), await clientFor('mcp', s, null)]) {
        const got = await seller.call('get_property_list', { list_id: list.list_id, auth_token });
        expect(got.ok).toBe(true);
        expect(got.body.identifiers).toEqual(ids('shared.example'));
        // The seller does not learn the buyer's account.
        expect(got.body.list.account).toBeUndefined();
        expect(bothVersionsErrors('property/get-property-list-response.json', got.body)).toEqual([]);
        await seller.close();
      }
      const anonymous = restClient(s, null);
      const wrong = await anonymous.call('get_property_list', { list_id: list.list_id, auth_token: `${auth_token.slice(0, -2)}xx` });
      expect(wrong.body.adcp_error.code).toBe('REFERENCE_NOT_FOUND');
      const none = await s.fetch('/tasks/get_property_list', { method: 'POST', json: { list_id: list.list_id } });
      expect(none.status).toBe(401);
      // Only reads: the token does not let anyone change or list the buyer's lists.
      expect((await s.fetch('/tasks/list_property_lists', { method: 'POST', json: {} })).status).toBe(401);
      await owner.call('delete_property_list', { list_id: list.list_id, idempotency_key: key() });
      expect((await anonymous.call('get_property_list', { list_id: list.list_id, auth_token })).body.adcp_error.code).toBe('REFERENCE_NOT_FOUND');
    });

    test('tools/list publishes the AdCP request schemas; brand members AdCP allows are accepted, those both versions define kept', async () => {
      const res = await get().server.fetch('/mcp', {
        method: 'POST',
        headers: { accept: 'application/json', 'mcp-protocol-version': '2025-06-18' },
        token: TOKEN,
        json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      const tools = Object.fromEntries(((await res.json()) as any).result.tools.map((t: any) => [t.name, t.inputSchema]));
      expect(Object.keys(tools.create_property_list.properties)).toEqual(
        expect.arrayContaining(['account', 'name', 'base_properties', 'filters', 'brand', 'idempotency_key']),
      );
      expect(Object.keys(tools.get_collection_list.properties)).toEqual(expect.arrayContaining(['list_id', 'resolve', 'pagination']));
      expect(Object.keys(tools.validate_property_delivery.properties)).toEqual(expect.arrayContaining(['list_id', 'records', 'include_compliant']));
      const c = restClient(get().server, TOKEN);
      const brand = { domain: 'acmeoutdoor.example', industries: ['outdoor'], brand_kit_override: { colors: {} } };
      const created = await c.call('create_property_list', { account: ACME, name: 'Branded', brand, idempotency_key: key() });
      expect(created.body.list.brand).toEqual({ domain: 'acmeoutdoor.example', industries: ['outdoor'] });
      expect(bothVersionsErrors(P('create-property-list-response'), created.body)).toEqual([]);
    });

    test('a webhook_url needs a deployment that sends webhooks', async () => {
      const c = restClient(get().server, TOKEN);
      const r = await c.call('create_property_list', { account: ACME, name: 'x', webhook_url: 'https://buyer.example/hook', idempotency_key: key() });
      expect(r.body.adcp_error).toMatchObject({ code: 'INVALID_REQUEST', field: 'webhook_url' });
    });
  },
);
