import fc from 'fast-check';

/**
 * Generators of hostile input for the fuzz suite: strings Postgres or JSON tooling choke on,
 * numbers beyond column types, wrong types, and JSON-Schema-shaped values (so requests also get
 * past the first check and reach handlers and the database).
 */

/** How a run is sized and reproduced: FUZZ_SEED replays a run, FUZZ_RUNS sizes it. */
export function fuzzSettings(defaultRuns: number): { seed: number; numRuns: number } {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  const numRuns = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : defaultRuns;
  return { seed, numRuns };
}

/** Hostile strings short enough for a URL. */
export const hostileShortString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfff',
    '\udc00\ud800',
    '\u202eevil\u202c',
    '\u200b\u200d\ufeff',
    'caf\u0065\u0301',
    '😀',
    '%00',
    '%ED%A0%80',
    '../../etc/passwd',
    "'; DROP TABLE x; --",
    '%_\\',
    '$' + '{jndi:ldap://x}',
    '<script>alert(1)</script>',
    '',
    ' ',
    'null',
    '__proto__',
    'constructor',
    'toString',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

/** Hostile strings, huge ones included. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: hostileShortString },
  { weight: 1, arbitrary: fc.integer({ min: 2000, max: 120_000 }).map((n) => 'x'.repeat(n)) },
);

export const hugeNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(1e308, -1e308, 2 ** 31, 2 ** 31 - 1, -(2 ** 31) - 1, 2 ** 53, 2 ** 63, -(2 ** 63), 2 ** 53 + 2, 0.5, -0, 1e-300, 0, -1),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

export const plausibleString: fc.Arbitrary<string> = fc.constantFrom(
  'example.com',
  'news.example',
  'www.example.org',
  'https://agent.example/mcp',
  'https://h.example/x//a',
  'http://127.0.0.1/',
  '0195f0c0-0000-7000-8000-00000000c0de',
  'sig_auto_intenders_suv',
  'the-trade-desk',
  'website',
  'domain',
  'US',
  'public',
  'members_only',
  'fuzz-idempotency-key-0001',
);

/** A leaf of any JSON type, hostile or not. */
export const anyLeaf: fc.Arbitrary<unknown> = fc.oneof(hostileString, plausibleString, hugeNumber, fc.boolean(), fc.constant(null));

/** Any JSON value, objects with hostile keys included, a few levels deep. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, anyLeaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(hostileString, plausibleString, fc.string({ maxLength: 8 })), tie('value'), { maxKeys: 4 }),
})).value;

type Schema = Record<string, any>;

/** A value shaped by a JSON Schema (draft 2020-12 subset), with hostile leaves mixed in. */
export function fromSchema(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return anyLeaf;
  const variants: fc.Arbitrary<unknown>[] = [];
  if (Array.isArray(schema.enum)) variants.push(fc.constantFrom(...schema.enum));
  if ('const' in schema) variants.push(fc.constant(schema.const));
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(schema[key])) variants.push(...schema[key].map((s: Schema) => fromSchema(s, depth + 1)));
  }
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  for (const type of types) {
    if (type === 'string') variants.push(fc.oneof(plausibleString, hostileString, fc.string({ maxLength: 20 })));
    if (type === 'integer' || type === 'number') variants.push(fc.oneof(hugeNumber, fc.integer({ min: -5, max: 300 })));
    if (type === 'boolean') variants.push(fc.boolean());
    if (type === 'null') variants.push(fc.constant(null));
    if (type === 'array') variants.push(fc.array(fromSchema(schema.items, depth + 1), { maxLength: 4 }));
    if (type === 'object') variants.push(objectFromSchema(schema, depth));
  }
  if (!variants.length) variants.push(anyJson);
  // Now and then the wrong type altogether.
  return fc.oneof({ weight: 4, arbitrary: fc.oneof(...variants) }, { weight: 1, arbitrary: anyLeaf });
}

function objectFromSchema(schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const names = Object.keys(properties);
  if (!names.length)
    return fc.dictionary(fc.oneof(hostileString, fc.string({ maxLength: 8 })), anyLeaf, { maxKeys: 3 }) as fc.Arbitrary<Record<string, unknown>>;
  const required = new Set<string>(schema.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names) model[name] = fromSchema(properties[name], depth + 1);
  return fc
    .tuple(
      fc.record(model, { requiredKeys: names.filter((n) => required.has(n)) }),
      fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(hostileShortString, anyLeaf) }),
    )
    .map(([object, extra]) => (extra ? { ...object, [extra[0]]: extra[1] } : object));
}

/** A plausible string for a member named `name` (domains, URLs, ids), so requests reach handlers. */
function plausibleFor(name: string): fc.Arbitrary<string> {
  if (/domain|host/i.test(name)) return fc.constantFrom('example.com', 'news.example', 'fuzz.example', 'xn--80ak6aa92e.com', 'sub.domain.example');
  if (/url|uri|endpoint/i.test(name))
    return fc.constantFrom('https://agent.example/mcp', 'https://h.example/x//a', 'https://h.example/%70rivate-a', 'https://agent.example:8443/a2a');
  if (/(^|_)id$|cursor|ref/i.test(name)) return fc.constantFrom('0195f0c0-0000-7000-8000-00000000c0de', 'sig_auto_intenders_suv', 'home', '1');
  if (/country|countries|market/i.test(name)) return fc.constantFrom('US', 'DE', 'usa');
  return fc.oneof(plausibleString, fc.string({ minLength: 1, maxLength: 12 }));
}

/** A value that satisfies `schema` as far as a generator easily can. */
export function plausible(schema: Schema | undefined, name = '', depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return plausibleFor(name);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if ('const' in schema) return fc.constant(schema.const);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s: Schema) => plausible(s, name, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return plausibleFor(name);
    case 'integer':
    case 'number':
      // Integers inside the bounds (a number's bounds need not be whole: 0 <= x <= 99.99).
      return fc.integer({ min: Math.ceil(Math.max(schema.minimum ?? 0, -5)), max: Math.floor(Math.min(schema.maximum ?? 100, 100)) });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(plausible(schema.items, name, depth + 1), { minLength: schema.minItems ? 1 : 0, maxLength: 2 });
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, s] of Object.entries(properties)) model[key] = plausible(s, key, depth + 1);
      return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k: string) => k in properties) });
    }
    default:
      return plausibleFor(name);
  }
}

/** Every leaf path of a JSON value. */
function leafPaths(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.length ? value.flatMap((v, i) => leafPaths(v, [...path, i])) : [path];
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    return keys.length ? keys.flatMap((k) => leafPaths((value as Record<string, unknown>)[k], [...path, k])) : [path];
  }
  return [path];
}

function replaceAt(value: unknown, path: Array<string | number>, leaf: unknown): unknown {
  if (!path.length) return leaf;
  const [head, ...rest] = path;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  copy[head!] = replaceAt(copy[head!], rest, leaf);
  return copy;
}

/** A plausible value with exactly one leaf made hostile: the input gets as far as it can before the bad part. */
export function oneHostileLeaf(schema: Schema | undefined): fc.Arbitrary<unknown> {
  return fc.tuple(plausible(schema), fc.nat(), fc.oneof(hostileString, hugeNumber, anyJson)).map(([value, pick, leaf]) => {
    const paths = leafPaths(value);
    return replaceAt(value, paths[pick % paths.length]!, leaf);
  });
}

/** JSON text nested `depth` levels (as text: JSON.stringify itself overflows long before). */
export const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 65, max: 30_000 }), fc.boolean())
  .map(([depth, arrays]) => (arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

/** A body for a JSON endpoint: shaped by its schema, or a wrong top-level type, or deep, or broken. */
export function bodyText(schema: Schema | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: plausible(schema ?? { type: 'object' }).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 6, arbitrary: oneHostileLeaf(schema ?? { type: 'object' }).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 3, arbitrary: fromSchema(schema ?? { type: 'object' }).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.tuple(fromSchema(schema ?? { type: 'object' }), deepJsonText).map(([v, deep]) => injectRaw(v, deep)) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '{"a":1,"a":2}', '[1,2', '\u0000', 'nul', '{"x":"\\ud800"}', '{"x":"\\u0000"}', '1e99999') },
  );
}

/** `value` serialized with one member replaced by a raw JSON text (e.g. a deep document). */
function injectRaw(value: unknown, raw: string): string {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const key = keys[0] ?? 'context';
    const rest = JSON.stringify({ ...(value as object), [key]: 0 });
    return rest.replace(`${JSON.stringify(key)}:0`, `${JSON.stringify(key)}:${raw}`);
  }
  return `{"context":${raw}}`;
}

/** Content types a JSON endpoint may be sent (mostly JSON). */
export const contentType: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
      'application/ld+json',
      '\u00e9/\u00e9',
      null,
    ),
  },
);
