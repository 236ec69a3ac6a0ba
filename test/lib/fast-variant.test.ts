import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { fastVariant } from '../../lib/fast-variant.ts';

const variant = v.variant(
  'kind',
  [
    v.looseObject({ kind: v.literal('image'), url: v.pipe(v.string(), v.url('must be a URL')), width: v.number() }),
    v.pipe(
      v.object({ kind: v.literal('tag'), mode: v.picklist(['url', 'inline']), url: v.optional(v.string()) }),
      v.forward(
        v.check((t) => t.mode !== 'url' || !!t.url, 'url is required'),
        ['url'],
      ),
    ),
    v.object({ kind: v.literal('text'), content: v.string('is required') }),
  ],
  'must be an asset',
);
const fast = fastVariant(variant);

const INPUTS: unknown[] = [
  { kind: 'image', url: 'https://a.example/x.png', width: 3, extra: true },
  { kind: 'image', url: 'not a url', width: 3 },
  { kind: 'tag', mode: 'url' },
  { kind: 'tag', mode: 'inline', extra: 1 },
  { kind: 'text', content: 'hello' },
  { kind: 'text' },
  { kind: 'video', url: 'https://a.example/x.mp4' },
  { content: 'no kind' },
  { kind: undefined },
  Object.create({ kind: 'text', content: 'inherited' }),
  'text',
  null,
  [],
  42,
];

test('answers every input as the variant does: output, issues and their paths', () => {
  for (const input of INPUTS) {
    for (const config of [{}, { abortPipeEarly: true }, { abortEarly: true }]) {
      const want = v.safeParse(variant, input, config);
      const got = v.safeParse(fast, input, config);
      expect(got.success).toBe(want.success);
      expect(got.output).toEqual(want.output);
      const issues = (r: typeof want) => r.issues?.map((i) => ({ message: i.message, path: i.path?.map((p) => p.key) }));
      expect(issues(got)).toEqual(issues(want));
    }
  }
  for (const input of [{ kind: 'text', content: 'x' }, { kind: 'text' }])
    expect(fast['~standard'].validate(input)).toEqual(variant['~standard'].validate(input));
});

test('a variant whose options it cannot index is returned as it is', () => {
  const repeated = v.variant('kind', [v.object({ kind: v.literal('a'), n: v.number() }), v.object({ kind: v.literal('a'), s: v.string() })]);
  expect(fastVariant(repeated)).toBe(repeated);
  const nested = v.variant('kind', [v.variant('sub', [v.object({ kind: v.literal('a'), sub: v.literal('x') })])]);
  expect(fastVariant(nested)).toBe(nested);
  const picklist = v.variant('kind', [v.object({ kind: v.picklist(['a', 'b']) })]);
  expect(fastVariant(picklist)).toBe(picklist);
});
