import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, HOSTS, restClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import type { TestServer } from '../support/server.ts';
import { ACME, artifact, key, NOVA, OTHER_TOKEN, POLICIES, startContentServer, TOKEN } from './content-fixture.ts';

// Content standards over the three hosts: the storyboards' lifecycle, every answer valid against
// AdCP 3.0.6 and 3.1.19; bad input is a 4xx that writes nothing; other callers' and other
// accounts' standards are not found.
const S = (f: string) => `content-standards/${f}.json`;

forEachDatabase<TestServer>(
  'governance content standards',
  (adapter, schema) => startContentServer(adapter, schema),
  (s) => s.close(),
  (get) => {
    for (const host of HOSTS) {
      test(`${host}: lifecycle (create, list, get, update, calibrate, validate delivery)`, async () => {
        const c = await clientFor(host, get(), TOKEN);
        const create = {
          account: ACME,
          scope: { languages_any: ['en'], description: `Acme standards ${host}` },
          policies: POLICIES,
          idempotency_key: key(),
          context: { correlation_id: `create-${host}` },
        };
        expect(bothVersionsErrors(S('create-content-standards-request'), create)).toEqual([]);
        const created = await c.call('create_content_standards', create);
        expect(created.ok).toBe(true);
        expect(bothVersionsErrors(S('create-content-standards-response'), created.body)).toEqual([]);
        expect(created.body.context).toEqual({ correlation_id: `create-${host}` });
        const id = created.body.standards_id;
        expect(id).toMatch(/^cs_/);

        const listed = await c.call('list_content_standards', { account: ACME, languages: ['en'] });
        expect(bothVersionsErrors(S('list-content-standards-response'), listed.body)).toEqual([]);
        expect(listed.body.standards.map((s: any) => s.standards_id)).toContain(id);
        const none = await c.call('list_content_standards', { account: ACME, channels: ['ctv'] });
        expect(none.body.standards.map((s: any) => s.standards_id)).not.toContain(id);

        const got = await c.call('get_content_standards', { standards_id: id, account: ACME });
        expect(bothVersionsErrors(S('get-content-standards-response'), got.body)).toEqual([]);
        expect(got.body).toMatchObject({ standards_id: id, name: `Acme standards ${host}`, languages_any: ['en'], policies: POLICIES });

        const violent = artifact('violent', { description: 'Display ad featuring graphic hunting scene with violent imagery' });
        const calibrate = { account: ACME, standards_id: id, artifact: violent, idempotency_key: key() };
        expect(bothVersionsErrors(S('calibrate-content-request'), calibrate)).toEqual([]);
        const failed = await c.call('calibrate_content', calibrate);
        expect(bothVersionsErrors(S('calibrate-content-response'), failed.body)).toEqual([]);
        expect(failed.body.verdict).toBe('fail');
        const feature = failed.body.features.find((f: any) => f.policy_id === 'no_violent_imagery');
        expect(feature.status).toBe('failed');
        expect(feature.explanation).toContain('description');
        expect(feature.explanation).toContain('violent imagery');

        const clean = await c.call('calibrate_content', { account: ACME, standards_id: id, artifact: artifact('trail_pro'), idempotency_key: key() });
        expect(clean.body.verdict).toBe('pass');

        // The stricter version applies at once: the clean artifact now lacks alt text.
        const update = {
          account: ACME,
          standards_id: id,
          policies: [
            ...POLICIES,
            { policy_id: 'image_alt_text', policy_categories: ['accessibility'], enforcement: 'must', policy: 'All images must have alt text' },
          ],
          idempotency_key: key(),
        };
        expect(bothVersionsErrors(S('update-content-standards-request'), update)).toEqual([]);
        const updated = await c.call('update_content_standards', update);
        expect(bothVersionsErrors(S('update-content-standards-response'), updated.body)).toEqual([]);
        expect(updated.body).toMatchObject({ success: true, standards_id: id });
        const stricter = await c.call('calibrate_content', { account: ACME, standards_id: id, artifact: artifact('trail_pro'), idempotency_key: key() });
        expect(stricter.body.verdict).toBe('fail');
        expect(stricter.body.features.find((f: any) => f.policy_id === 'image_alt_text')).toMatchObject({ status: 'failed' });

        const validate = {
          account: ACME,
          standards_id: id,
          records: [
            { record_id: 'r1', artifact: artifact('ok', { assets: [{ type: 'image', url: 'https://cdn.example/a.png', alt_text: 'Trail shoes' }] }) },
            { record_id: 'r2', artifact: violent, channel: 'display' },
          ],
        };
        expect(bothVersionsErrors(S('validate-content-delivery-request'), validate)).toEqual([]);
        const checked = await c.call('validate_content_delivery', validate);
        expect(bothVersionsErrors(S('validate-content-delivery-response'), checked.body)).toEqual([]);
        expect(checked.body.summary).toEqual({ total_records: 2, passed_records: 1, failed_records: 1 });
        expect(checked.body.results.map((r: any) => [r.record_id, r.verdict])).toEqual([
          ['r1', 'pass'],
          ['r2', 'fail'],
        ]);
        const failuresOnly = await c.call('validate_content_delivery', { ...validate, include_passed: false });
        expect(failuresOnly.body.results.map((r: any) => r.record_id)).toEqual(['r2']);
        await c.close();
      });
    }

    test('list pagination: has_more with a cursor, then a terminal page without one; a foreign cursor is refused', async () => {
      const c = restClient(get(), TOKEN);
      const account = { brand: { domain: 'pages.example' }, operator: 'pinnacle-agency.example' };
      for (const language of ['en', 'es', 'fr']) {
        const r = await c.call('create_content_standards', {
          account,
          scope: { languages_any: [language] },
          policies: POLICIES.slice(0, 1),
          idempotency_key: key(),
        });
        expect(r.ok).toBe(true);
      }
      const first = await c.call('list_content_standards', { account, pagination: { max_results: 2 } });
      expect(bothVersionsErrors(S('list-content-standards-response'), first.body)).toEqual([]);
      expect(first.body.standards).toHaveLength(2);
      expect(first.body.pagination).toMatchObject({ has_more: true, total_count: 3 });
      const second = await c.call('list_content_standards', { account, pagination: { max_results: 2, cursor: first.body.pagination.cursor } });
      expect(second.body.standards).toHaveLength(1);
      expect(second.body.pagination).toEqual({ has_more: false, total_count: 3 });
      const foreign = await c.call('list_content_standards', { account: ACME, pagination: { cursor: first.body.pagination.cursor } });
      expect(foreign.ok).toBe(false);
      expect(foreign.body.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'pagination.cursor' });
    });

    test('get_media_buy_artifacts: seeded artifacts of the caller, filtered and paginated; other callers and accounts find nothing', async () => {
      const c = restClient(get(), TOKEN);
      const seed = await c.call('comply_test_controller', {
        scenario: 'seed_media_buy_artifacts',
        params: {
          media_buy_id: 'mb_content_1',
          account: ACME,
          artifacts: [
            { record_id: 'a1', artifact: artifact('a1'), delivered_at: '2026-03-02T01:00:00Z', package_id: 'pkg_1', local_verdict: 'pass' },
            { record_id: 'a2', artifact: artifact('a2'), delivered_at: '2026-03-02T02:00:00Z', package_id: 'pkg_2', local_verdict: 'fail' },
            { record_id: 'a3', artifact: artifact('a3'), delivered_at: '2026-03-02T03:00:00Z', package_id: 'pkg_1', channel: 'display' },
          ],
        },
      });
      expect(seed.body.success).toBe(true);
      const request = { account: ACME, media_buy_id: 'mb_content_1', pagination: { max_results: 2 } };
      expect(bothVersionsErrors(S('get-media-buy-artifacts-request'), request)).toEqual([]);
      const first = await c.call('get_media_buy_artifacts', request);
      expect(bothVersionsErrors(S('get-media-buy-artifacts-response'), first.body)).toEqual([]);
      expect(first.body.artifacts.map((a: any) => a.record_id)).toEqual(['a1', 'a2']);
      expect(first.body.pagination).toMatchObject({ has_more: true, total_count: 3 });
      const rest = await c.call('get_media_buy_artifacts', { ...request, pagination: { max_results: 2, cursor: first.body.pagination.cursor } });
      expect(rest.body.artifacts.map((a: any) => a.record_id)).toEqual(['a3']);
      expect(rest.body.pagination).toEqual({ has_more: false, total_count: 3 });
      const failures = await c.call('get_media_buy_artifacts', { account: ACME, media_buy_id: 'mb_content_1', failures_only: true });
      expect(failures.body.artifacts.map((a: any) => a.record_id)).toEqual(['a2']);
      const pkg = await c.call('get_media_buy_artifacts', { media_buy_id: 'mb_content_1', package_ids: ['pkg_1'] });
      expect(pkg.body.artifacts.map((a: any) => a.record_id)).toEqual(['a1', 'a3']);

      for (const [token, account] of [
        [OTHER_TOKEN, undefined],
        [TOKEN, NOVA],
      ] as const) {
        const r = await get().fetch('/tasks/get_media_buy_artifacts', {
          method: 'POST',
          token,
          json: { media_buy_id: 'mb_content_1', ...(account ? { account } : {}) },
        });
        expect(r.status).toBe(404);
        const body = (await r.json()) as any;
        expect(bothVersionsErrors(S('get-media-buy-artifacts-response'), body)).toEqual([]);
        expect(body.errors[0]).toMatchObject({ code: 'MEDIA_BUY_NOT_FOUND', field: 'media_buy_id' });
      }
    });

    test('artifact webhook: a pushed batch is recorded for the caller (re-delivery replaces it); bad or anonymous pushes write nothing', async () => {
      const push = {
        idempotency_key: 'artifact-batch-000000000001',
        media_buy_id: 'mb_pushed_1',
        batch_id: 'batch_1',
        timestamp: '2026-03-02T05:00:00Z',
        artifacts: [
          { artifact: artifact('p1'), delivered_at: '2026-03-02T04:00:00Z', impression_id: 'imp_1', package_id: 'pkg_1' },
          { artifact: artifact('p2', { description: 'violent imagery' }), delivered_at: '2026-03-02T04:30:00Z' },
        ],
      };
      expect(bothVersionsErrors(S('artifact-webhook-payload'), push)).toEqual([]);
      const post = (body: unknown, token: string | null = TOKEN) =>
        get().fetch('/content-standards/artifacts', { method: 'POST', token: token ?? undefined, json: body });
      for (const [body, token, status] of [
        [{ ...push, artifacts: [{ artifact: { artifact_id: 'x', assets: [] }, delivered_at: '2026-03-02T04:00:00Z' }] }, TOKEN, 400],
        [{ ...push, timestamp: 'yesterday' }, TOKEN, 400],
        [push, null, 401],
      ] as const) {
        const r = await post(body, token);
        expect(r.status).toBe(status);
        expect(((await r.json()) as any).errors[0].code).toBe(status === 401 ? 'AUTH_REQUIRED' : 'INVALID_REQUEST');
      }
      const c = restClient(get(), TOKEN);
      expect((await get().fetch('/tasks/get_media_buy_artifacts', { method: 'POST', token: TOKEN, json: { media_buy_id: 'mb_pushed_1' } })).status).toBe(404);
      expect((await post(push)).status).toBe(200);
      expect((await post(push)).status).toBe(200);
      const got = await c.call('get_media_buy_artifacts', { media_buy_id: 'mb_pushed_1' });
      expect(bothVersionsErrors(S('get-media-buy-artifacts-response'), got.body)).toEqual([]);
      expect(got.body.artifacts.map((a: any) => [a.record_id, a.package_id, a.timestamp])).toEqual([
        ['imp_1', 'pkg_1', '2026-03-02T04:00:00.000Z'],
        ['batch_1:1', undefined, '2026-03-02T04:30:00.000Z'],
      ]);
      const theirs = await get().fetch('/tasks/get_media_buy_artifacts', { method: 'POST', token: OTHER_TOKEN, json: { media_buy_id: 'mb_pushed_1' } });
      expect(theirs.status).toBe(404);
    });

    test('cross-account: another caller, or another account of the caller, finds no standards (per task)', async () => {
      const mine = restClient(get(), TOKEN);
      const created = await mine.call('create_content_standards', {
        account: ACME,
        scope: { languages_any: ['de'] },
        policies: POLICIES,
        idempotency_key: key(),
      });
      const id = created.body.standards_id;
      // The caller's second account exists (NOVA), so naming it is not "no such account".
      await mine.call('create_content_standards', { account: NOVA, scope: { languages_any: ['de'] }, policies: POLICIES, idempotency_key: key() });
      const calls: [string, Record<string, unknown>, string][] = [
        ['get_content_standards', { standards_id: id }, 'get-content-standards-response'],
        ['update_content_standards', { standards_id: id, policies: POLICIES.slice(0, 1), idempotency_key: key() }, 'update-content-standards-response'],
        ['calibrate_content', { standards_id: id, artifact: artifact('x'), idempotency_key: key() }, 'calibrate-content-response'],
        ['validate_content_delivery', { standards_id: id, records: [{ record_id: 'r', artifact: artifact('x') }] }, 'validate-content-delivery-response'],
      ];
      for (const [task, args, schema] of calls) {
        for (const [token, extra] of [
          [OTHER_TOKEN, {}],
          [TOKEN, { account: NOVA }],
        ] as const) {
          const r = await get().fetch(`/tasks/${task}`, { method: 'POST', token, json: { ...args, ...extra, idempotency_key: key() } });
          expect(`${task} ${r.status}`).toBe(`${task} 404`);
          const body = (await r.json()) as any;
          expect(bothVersionsErrors(S(schema), body)).toEqual([]);
          expect(body.errors[0]).toMatchObject({ code: 'REFERENCE_NOT_FOUND', field: 'standards_id' });
        }
      }
      const other = restClient(get(), OTHER_TOKEN);
      const theirs = await other.call('list_content_standards', {});
      expect(theirs.body.standards.map((s: any) => s.standards_id)).not.toContain(id);
      const nova = await mine.call('list_content_standards', { account: NOVA });
      expect(nova.body.standards.map((s: any) => s.standards_id)).not.toContain(id);
      // The refused update changed nothing.
      const got = await mine.call('get_content_standards', { standards_id: id });
      expect(got.body.policies).toEqual(POLICIES);
    });

    test('bad input: a 4xx naming the field, nothing written (per task)', async () => {
      const c = restClient(get(), TOKEN);
      const account = { brand: { domain: 'badinput.example' }, operator: 'pinnacle-agency.example' };
      const created = await c.call('create_content_standards', { account, scope: { languages_any: ['en'] }, policies: POLICIES, idempotency_key: key() });
      const id = created.body.standards_id;
      const cases: [string, Record<string, unknown>, string][] = [
        [
          'create_content_standards',
          { account, scope: { languages_any: ['en'] }, policies: [{ policy_id: 'p', enforcement: 'always', policy: 'x' }] },
          'policies',
        ],
        ['create_content_standards', { account, scope: { channels_any: ['display'] }, policies: POLICIES }, 'scope'],
        ['create_content_standards', { account, scope: { languages_any: ['en'] } }, 'policies'],
        ['create_content_standards', { account, scope: { languages_any: ['en'] }, policies: [POLICIES[0], POLICIES[0]] }, 'policies'],
        ['update_content_standards', { account, standards_id: id, policies: [] }, 'policies'],
        ['update_content_standards', { account, standards_id: id, scope: { channels_any: ['hologram'] } }, 'scope'],
        ['list_content_standards', { account, pagination: { max_results: 0 } }, 'pagination'],
        ['get_content_standards', { account }, 'standards_id'],
        ['calibrate_content', { account, standards_id: id, artifact: { artifact_id: 'a', assets: [] } }, 'artifact'],
        ['validate_content_delivery', { account, standards_id: id, records: [] }, 'records'],
        ['get_media_buy_artifacts', { account, media_buy_id: 'mb', pagination: { max_results: 0 } }, 'pagination'],
      ];
      for (const [task, args, field] of cases) {
        const r = await get().fetch(`/tasks/${task}`, { method: 'POST', token: TOKEN, json: { ...args, idempotency_key: key() } });
        expect(`${task} ${r.status}`).toMatch(new RegExp(`^${task} 4\\d\\d$`));
        const body = (await r.json()) as any;
        expect(body.errors[0].code).toBe('INVALID_REQUEST');
        expect(`${task} ${body.errors[0].field}`).toStartWith(`${task} ${field}`);
      }
      const listed = await c.call('list_content_standards', { account });
      expect(listed.body.standards.map((s: any) => s.standards_id)).toEqual([id]);
      const got = await c.call('get_content_standards', { account, standards_id: id });
      expect(got.body.policies).toEqual(POLICIES);
      expect(got.body.languages_any).toEqual(['en']);
    });
  },
);
