import { expect, test } from 'bun:test';
import { fullManifestSchemaForTests, MANIFEST_LIMITS, manifestSchema } from '../../plugins/creative/manifest.ts';
import { fid, nativeManifest } from './fixture.ts';
import { memberPaths, mutate, schemaAnswer } from '../support/shortcut-oracle.ts';

// The manifest schema's shortcut (fastAccept) answers exactly as the schema: same success, same
// output, same first issue, for valid manifests and every one-member mutation of them.

const img = (extra: object = {}) => ({ asset_type: 'image', url: 'https://cdn.example/a.jpg', width: 300, height: 250, ...extra });
const SEEDS: unknown[] = [
  nativeManifest(),
  { ...nativeManifest(), brand: { domain: 'acme.example', brand_kit_override: { colors: { primary: '#C8102E' } } }, extra: [1, 2] },
  {
    format_id: fid('display_300x250_image', { width: 300, height: 250 }),
    assets: { banner_image: img({ alt_text: 'Skates' }), click: { asset_type: 'url', url: 'https://a.example/{CLICK}', url_type: 'clickthrough' } },
  },
  {
    format_id: fid('video_15s', { duration_ms: 15000 }),
    assets: { video: { asset_type: 'video', url: 'https://v.example/a.mp4', width: 640, height: 360, duration_ms: 15000 } },
  },
  {
    format_id: fid('audio_30s'),
    assets: { audio: { asset_type: 'audio', url: 'https://v.example/a.mp3', duration_ms: 30000 }, hook: { asset_type: 'webhook', url: 'https://h.example/' } },
  },
  {
    format_id: fid('x'),
    assets: {
      a: { asset_type: 'html', content: '<b>x</b>' },
      b: { asset_type: 'css', content: '' },
      c: { asset_type: 'javascript', content: 'x' },
      d: { asset_type: 'markdown', content: '*' },
    },
  },
  {
    format_id: fid('x'),
    assets: {
      a: { asset_type: 'brief', anything: 1 },
      b: { asset_type: 'catalog' },
      v: { asset_type: 'vast', delivery_type: 'url', url: 'https://t.example/vast' },
    },
  },
  { format_id: fid('x'), assets: { promoted_offerings: { brand_manifest: { name: 'Acme' } }, t: { asset_type: 'text', content: 'x' } } },
];

const WEIRD: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'javascript:alert(1)',
  'http://',
  'https://user:pw@a.example/',
  `https://a.example/${'a'.repeat(2048)}`,
  'a'.repeat(10_001),
  -1,
  0,
  1.5,
  20_001,
  3_600_001,
  true,
  [],
  {},
  { asset_type: 'text' },
  { asset_type: 'image', url: 'https://a.example/i.png', width: 1, height: 1 },
];

test('the shortcut answers every manifest and one-member mutation as the schema does', () => {
  const inputs: unknown[] = [...SEEDS, ...WEIRD];
  for (const seed of SEEDS) {
    for (const path of memberPaths(seed)) for (const value of WEIRD) inputs.push(mutate(seed, path, value));
    for (const key of ['constructor', 'prototype', 'extra_asset', 'BAD-KEY']) {
      inputs.push(mutate(seed, ['assets', key], { asset_type: 'text', content: 'x' }));
      inputs.push(mutate(seed, [key], 1));
      inputs.push(mutate(seed, ['format_id', key], 1));
    }
    inputs.push(JSON.parse(JSON.stringify(seed).replace('{"asset_type"', '{"__proto__":{"x":1},"asset_type"')));
  }
  inputs.push({ format_id: fid('x'), assets: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`a${i}`, { asset_type: 'brief' }])) });
  inputs.push({ format_id: fid('x'), assets: { t: { asset_type: 'html', content: '"'.repeat(MANIFEST_LIMITS.bytes / 2) } } });
  inputs.push({ format_id: fid('x'), assets: { t: { asset_type: 'html', content: 'a'.repeat(MANIFEST_LIMITS.markup) } }, pad: 'b'.repeat(60_000) });
  let accepted = 0;
  for (const input of inputs) {
    const fast = schemaAnswer(manifestSchema, input);
    expect({ input, ...fast }).toEqual({ input, ...schemaAnswer(fullManifestSchemaForTests, input) });
    if (fast.ok) accepted++;
  }
  expect(inputs.length).toBeGreaterThan(1000);
  expect(accepted).toBeGreaterThan(100);
});
