import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, clientFor, type TaskClient } from '../support/agent.ts';
import { ACME, fid, nativeManifest, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

const KEY = 'creative-bad-input-key-0001';
const brand = { domain: 'acme.example' };
const gen = (target: unknown, extra: Record<string, unknown> = {}) => ({ idempotency_key: KEY, target_format_id: target, message: 'Rocket skates', ...extra });
const promoted = { promoted_offerings: { brand_manifest: ACME } };
const withAssets = (assets: Record<string, unknown>) => nativeManifest(assets);
const { main_image: _m, ...withoutImage } = nativeManifest().assets;
const single = (manifest: unknown, extra: Record<string, unknown> = {}) => ({ request_type: 'single', creative_manifest: manifest, ...extra });
const clickManifest = (url: string) => ({
  format_id: fid('display_300x250_image'),
  assets: { banner_image: { asset_type: 'image', url: 'https://cdn.acme.example/b.png', width: 300, height: 250 }, click_url: { asset_type: 'url', url } },
});

/** [task, arguments, HTTP status, code, field]. Every one must leave the database untouched. */
const CASES: [string, Record<string, unknown>, number, string, string][] = [
  // Bare-string and malformed format ids, wherever a format id is expected.
  ['list_creative_formats', { format_ids: ['display_300x250_image'] }, 400, 'INVALID_FORMAT_ID', 'format_ids[0]'],
  ['list_creative_formats', { format_ids: [{ id: 'display_300x250_image' }] }, 400, 'INVALID_FORMAT_ID', 'format_ids[0].agent_url'],
  ['build_creative', gen('display_300x250_html', { brand }), 400, 'INVALID_FORMAT_ID', 'target_format_id'],
  [
    'build_creative',
    { idempotency_key: KEY, target_format_ids: [fid('display_300x250_html'), 'display_728x90_html'], brand },
    400,
    'INVALID_FORMAT_ID',
    'target_format_ids[1]',
  ],
  ['preview_creative', single({ ...nativeManifest(), format_id: 'native_standard' }), 400, 'INVALID_FORMAT_ID', 'creative_manifest.format_id'],
  ['preview_creative', single(nativeManifest(), { format_id: 'native_standard' }), 400, 'INVALID_FORMAT_ID', 'format_id'],
  [
    'preview_creative',
    single({ ...nativeManifest(), format_id: fid('native_standard', { id: 'native standard!' }) }),
    400,
    'INVALID_FORMAT_ID',
    'creative_manifest.format_id.id',
  ],
  [
    'preview_creative',
    single({ ...clickManifest('https://acme.example/'), format_id: fid('display_300x250_image', { width: 728, height: 90 }) }),
    400,
    'INVALID_FORMAT_ID',
    'creative_manifest.format_id.width',
  ],
  // Unknown formats, here or named under another agent's URL.
  ['build_creative', gen(fid('display_999x999_html'), { brand }), 404, 'FORMAT_NOT_SUPPORTED', 'target_format_id'],
  [
    'build_creative',
    gen({ agent_url: 'https://creative.other.example', id: 'other_story_1080x1920' }, { brand }),
    404,
    'FORMAT_NOT_SUPPORTED',
    'target_format_id',
  ],
  ['preview_creative', single({ ...nativeManifest(), format_id: fid('no_such_format') }), 404, 'FORMAT_NOT_SUPPORTED', 'creative_manifest.format_id'],
  // Manifests that do not satisfy their format (422 names the asset).
  ['preview_creative', single({ format_id: fid('native_standard'), assets: withoutImage }), 422, 'VALIDATION_ERROR', 'creative_manifest.assets.main_image'],
  [
    'preview_creative',
    single(withAssets({ title: { asset_type: 'image', url: 'https://cdn.acme.example/t.png', width: 10, height: 10 } })),
    422,
    'VALIDATION_ERROR',
    'creative_manifest.assets.title',
  ],
  [
    'preview_creative',
    single(withAssets({ surprise: { asset_type: 'text', content: 'not a slot' } })),
    422,
    'VALIDATION_ERROR',
    'creative_manifest.assets.surprise',
  ],
  [
    'build_creative',
    { idempotency_key: KEY, creative_manifest: { format_id: fid('native_standard'), assets: withoutImage }, target_format_id: fid('display_300x250_html') },
    422,
    'VALIDATION_ERROR',
    'creative_manifest.assets.main_image',
  ],
  ['build_creative', gen(fid('video_vast_30s'), { brand }), 422, 'VALIDATION_ERROR', 'creative_manifest.assets.vast_tag'],
  // Invalid manifests: non-http asset URLs, oversized content, bad structure.
  [
    'preview_creative',
    single(withAssets({ main_image: { asset_type: 'image', url: 'javascript:alert(1)', width: 1200, height: 627 } })),
    400,
    'INVALID_REQUEST',
    'creative_manifest.assets.main_image.url',
  ],
  ['preview_creative', single(clickManifest('ftp://acme.example/landing')), 400, 'INVALID_REQUEST', 'creative_manifest.assets.click_url.url'],
  [
    'preview_creative',
    single(withAssets({ main_image: { asset_type: 'image', url: 'data:image/png;base64,AAAA', width: 1200, height: 627 } })),
    400,
    'INVALID_REQUEST',
    'creative_manifest.assets.main_image.url',
  ],
  [
    'preview_creative',
    single(withAssets({ description: { asset_type: 'text', content: 'x'.repeat(10_001) } })),
    400,
    'INVALID_REQUEST',
    'creative_manifest.assets.description.content',
  ],
  ['preview_creative', single({ ...nativeManifest(), padding: 'x'.repeat(300_000) }), 400, 'INVALID_REQUEST', 'creative_manifest'],
  ['preview_creative', single(withAssets({ title: 'Rocket Skates' })), 400, 'INVALID_REQUEST', 'creative_manifest.assets.title'],
  ['preview_creative', single(withAssets({ 'Bad-Key': { asset_type: 'text', content: 'x' } })), 400, 'INVALID_REQUEST', 'creative_manifest.assets'],
  [
    'build_creative',
    gen(fid('display_300x250_html'), {
      creative_manifest: { format_id: fid('display_300x250_html'), assets: { promoted_offerings: { brand_manifest: { ...ACME, url: 'file:///etc/passwd' } } } },
    }),
    400,
    'INVALID_REQUEST',
    'creative_manifest.assets.promoted_offerings.brand_manifest.url',
  ],
  // Macro injection: markup, quotes, bad names, values that break a URL.
  [
    'preview_creative',
    single(nativeManifest(), { inputs: [{ name: 'x', macros: { DEVICE_TYPE: '<script>alert(1)</script>' } }] }),
    400,
    'INVALID_REQUEST',
    'inputs[0].macros.DEVICE_TYPE',
  ],
  [
    'preview_creative',
    single(nativeManifest(), { inputs: [{ name: 'x', macros: { CLICK_URL: '"><img src=x onerror=alert(1)>' } }] }),
    400,
    'INVALID_REQUEST',
    'inputs[0].macros.CLICK_URL',
  ],
  [
    'preview_creative',
    single(nativeManifest(), { inputs: [{ name: 'x', macros: { device_type: 'mobile' } }] }),
    400,
    'INVALID_REQUEST',
    'inputs[0].macros.device_type',
  ],
  [
    'preview_creative',
    single(clickManifest('https://{HOST}/landing'), { inputs: [{ name: 'ok' }, { name: 'x', macros: { HOST: 'evil host' } }] }),
    400,
    'INVALID_REQUEST',
    'inputs[1].macros.HOST',
  ],
  [
    'build_creative',
    gen(fid('display_300x250_html'), {
      creative_manifest: { format_id: fid('display_300x250_html'), assets: promoted },
      macro_values: { CLICK_URL: "javascript:alert('x')" },
    }),
    400,
    'INVALID_REQUEST',
    'macro_values.CLICK_URL',
  ],
  // Request shape.
  ['list_creative_formats', { type: 'banner' }, 400, 'INVALID_REQUEST', 'type'],
  ['list_creative_formats', { max_width: -5 }, 400, 'INVALID_REQUEST', 'max_width'],
  ['list_creative_formats', { pagination: { cursor: 'not-a-cursor' } }, 400, 'INVALID_REQUEST', 'pagination.cursor'],
  ['build_creative', { idempotency_key: KEY, message: 'x', brand }, 400, 'INVALID_REQUEST', 'target_format_ids'],
  ['build_creative', { target_format_id: fid('display_300x250_html'), message: 'x', brand }, 400, 'INVALID_REQUEST', 'idempotency_key'],
  ['build_creative', gen(fid('display_300x250_html')), 400, 'INVALID_REQUEST', 'brand'],
  ['build_creative', gen(fid('display_300x250_html'), { brand: { domain: 'not a domain' } }), 400, 'INVALID_REQUEST', 'brand.domain'],
  ['build_creative', gen(fid('display_300x250_html'), { account: { brand: { domain: 'not a domain' } } }), 400, 'INVALID_REQUEST', 'account.brand.domain'],
  ['preview_creative', { creative_manifest: nativeManifest() }, 400, 'INVALID_REQUEST', 'request_type'],
  ['preview_creative', { request_type: 'single' }, 400, 'INVALID_REQUEST', 'creative_manifest'],
  [
    'preview_creative',
    { request_type: 'batch', requests: Array.from({ length: 51 }, () => ({ creative_manifest: nativeManifest() })) },
    400,
    'INVALID_REQUEST',
    'requests',
  ],
  ['preview_creative', single(nativeManifest(), { format_id: fid('native_content') }), 400, 'INVALID_REQUEST', 'format_id'],
  ['preview_creative', { request_type: 'variant', variant_id: 'v1' }, 400, 'UNSUPPORTED_FEATURE', 'request_type'],
];

const TABLES = [
  'creative_previews',
  'creative_assets',
  'creative_build_variants',
  'creative_usage_reports',
  'tasks',
  'task_status_history',
  'idempotency_keys',
];

forEachDatabase(
  'creative bad input',
  (adapter, schema) => startCreativeServer(adapter, schema),
  async (s) => s.server.close(),
  (get) => {
    test(`${CASES.length} cases`, () => expect(CASES.length).toBeGreaterThanOrEqual(20));

    for (const host of HOSTS) {
      describe(host, () => {
        let client: TaskClient;
        beforeAll(async () => {
          client = await clientFor(host, get().server, TOKEN);
        });
        afterAll(async () => client?.close());

        test('each bad request answers its code, names the field, in the creative error shape', async () => {
          for (const [task, args, , code, field] of CASES) {
            const { ok, body } = await client.call(task, args);
            expect({ task, field, ok, code: body.code, at: body.field }).toEqual({ task, field, ok: false, code, at: field });
            expect({ task, field, error: body.error }).toEqual({ task, field, error: { code, message: body.message } });
          }
        });
      });
    }

    test('REST answers each with its HTTP status; nothing was written by any host', async () => {
      const s: CreativeServer = get();
      for (const [task, args, status, code, field] of CASES) {
        const res = await s.server.fetch(`/tasks/${task}`, { method: 'POST', token: TOKEN, json: args });
        const body = (await res.json()) as any;
        expect({ field, status: res.status, code: body.error?.code }).toEqual({ field, status, code });
      }
      const db = s.server.deployment.get(Database);
      for (const table of TABLES) {
        const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)}`);
        expect({ table, n: row!.n }).toEqual({ table, n: 0 });
      }
    });
  },
);
