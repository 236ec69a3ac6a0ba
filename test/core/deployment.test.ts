import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { assemble } from '../../core/deployment.ts';
import { definePreset, loadConfig, ConfigError } from '../../core/config.ts';
import { definePlugin, optional } from '../../core/plugin.ts';
import { token } from '../../core/token.ts';
import { storage } from '../../config/storage.ts';
import { search } from '../../config/search.ts';

const Thing = token<{ hello(): string }>('test.thing');
const Other = token<{ n: number }>('test.other');
const env = { LOG_LEVEL: 'silent' };
const provider = (name: string) => definePlugin({ name, provides: [Thing], init: (_d, k) => k.provide(Thing, { hello: () => name }) });
const consumer = definePlugin({
  name: 'consumer',
  deps: { thing: Thing },
  options: v.object({ greeting: v.optional(v.string(), 'hi') }),
  init({ thing }, kernel) {
    return { start: () => void `${kernel.options.greeting} ${thing.hello()}` };
  },
});

test('assembly fails fast naming the plugin and the missing port', async () => {
  const preset = definePreset({ name: 'p', plugins: [consumer()] });
  await expect(assemble(preset, { env })).rejects.toThrow('Plugin "consumer" requires port "test.thing", which no plugin of preset "p" provides');
});

test('two providers of one port are named', async () => {
  const preset = definePreset({ name: 'p', plugins: [provider('one')(), provider('two')()] });
  await expect(assemble(preset, { env })).rejects.toThrow('Port "test.thing" is provided by both "one" and "two"');
});

test('a plugin receives exactly its declared dependencies, typed; an optional one is undefined when absent', async () => {
  const seen: Record<string, unknown> = {};
  const probe = definePlugin({
    name: 'probe',
    deps: { thing: Thing, other: optional(Other) },
    init(deps) {
      seen.hello = deps.thing.hello();
      seen.other = deps.other;
      seen.keys = Object.keys(deps);
    },
  });
  await assemble(definePreset({ name: 'p', plugins: [probe(), provider('b')()] }), { env });
  expect(seen).toEqual({ hello: 'b', other: undefined, keys: ['thing', 'other'] });
});

test('reading an undeclared dependency, or binding an undeclared port, fails assembly naming the plugin', async () => {
  const sneaky = definePlugin({ name: 'sneaky', deps: { thing: Thing }, init: (deps) => void (deps as unknown as Record<string, unknown>).clock });
  await expect(assemble(definePreset({ name: 'p', plugins: [sneaky(), provider('b')()] }), { env })).rejects.toThrow(
    'Plugin "sneaky" uses "clock" without declaring it in deps',
  );
  const binder = definePlugin({ name: 'binder', init: (_d, k) => k.provide(Thing, { hello: () => 'x' }) });
  await expect(assemble(definePreset({ name: 'p', plugins: [binder()] }), { env })).rejects.toThrow(
    'Plugin "binder" binds port "test.thing" without declaring it in provides',
  );
  const lazy = definePlugin({ name: 'lazy', provides: [Thing], init: () => {} });
  await expect(assemble(definePreset({ name: 'p', plugins: [lazy()] }), { env })).rejects.toThrow(
    'Plugin "lazy" declares port "test.thing" but did not provide it',
  );
});

test('a dependency cycle is named', async () => {
  const a = definePlugin({ name: 'a', provides: [Thing], deps: { other: Other }, init: (_d, k) => k.provide(Thing, { hello: () => 'a' }) });
  const b = definePlugin({ name: 'b', provides: [Other], deps: { thing: Thing }, init: (_d, k) => k.provide(Other, { n: 1 }) });
  await expect(assemble(definePreset({ name: 'p', plugins: [a(), b()] }), { env })).rejects.toThrow('Plugin dependency cycle: a -> b -> a');
});

test('providers start before their dependents and stop after them; state lives in the instance', async () => {
  const order: string[] = [];
  const a = definePlugin({
    name: 'a',
    deps: { thing: Thing },
    init: () => ({ start: () => void order.push('start a'), stop: () => void order.push('stop a') }),
  });
  const b = definePlugin({
    name: 'b',
    provides: [Thing],
    init(_deps, kernel) {
      let starts = 0; // per deployment: two deployments of one preset do not share it
      kernel.provide(Thing, { hello: () => `b${starts}` });
      return { start: () => void order.push(`start b${++starts}`), stop: () => void order.push('stop b') };
    },
  });
  const preset = definePreset({ name: 'p', plugins: [a(), b()] });
  const d = await assemble(preset, { env });
  const other = await assemble(preset, { env });
  await Promise.all([d.start(), d.start()]); // idempotent
  await d.stop();
  await d.stop(); // idempotent
  expect(order).toEqual(['start b1', 'start a', 'stop a', 'stop b']);
  expect(d.get(Thing).hello()).toBe('b1');
  expect(other.get(Thing).hello()).toBe('b0');
});

test('plugin options are validated with the option path named', () => {
  expect(() => consumer({ greeting: 3 } as never)).toThrow(/plugins\.consumer\.greeting/);
});

test('plugin options come from the environment where the plugin maps a variable; errors name the path and the variable', async () => {
  const seen: unknown[] = [];
  const mapped = definePlugin({
    name: 'mapped',
    env: { MAPPED_URL: 'url', MAPPED_MAX: { path: 'limits.max', type: 'int' } },
    options: v.object({ url: v.pipe(v.string(), v.url('must be a URL')), limits: v.optional(v.object({ max: v.optional(v.number(), 5) }), {}) }),
    init: (_d, k) => void seen.push(k.options),
  });
  await assemble(definePreset({ name: 'p', plugins: [mapped()] }), { env: { ...env, MAPPED_URL: 'https://x.test', MAPPED_MAX: '9' } });
  expect(seen).toEqual([{ url: 'https://x.test', limits: { max: 9 } }]);
  await expect(assemble(definePreset({ name: 'p', plugins: [mapped()] }), { env: { ...env, MAPPED_URL: 'nope' } })).rejects.toThrow(
    'plugins.mapped.url: must be a URL (from MAPPED_URL="nope")',
  );
  await expect(assemble(definePreset({ name: 'p', plugins: [mapped()] }), { env })).rejects.toThrow('plugins.mapped.url: is required (set MAPPED_URL)');
  await expect(
    assemble(definePreset({ name: 'p', plugins: [mapped()] }), { env: { ...env, MAPPED_URL: 'https://x.test', MAPPED_MAX: 'many' } }),
  ).rejects.toThrow('plugins.mapped.limits.max: must be an integer (from MAPPED_MAX="many")');
});

test('adapters are picked from a keyed map by variable; an unknown key fails loudly with the choices', async () => {
  await expect(assemble(definePreset({ name: 'p', plugins: [storage] }), { env: { ...env, STORAGE: 'mysql' } })).rejects.toThrow(
    'STORAGE: unknown adapter "mysql" (one of postgres, pglite)',
  );
  await expect(assemble(definePreset({ name: 'p', plugins: [storage] }), { env: { ...env, STORAGE: 'postgres' } })).rejects.toThrow(
    'plugins.storage-postgres.url: is required (set DATABASE_URL)',
  );
  await expect(
    assemble(definePreset({ name: 'p', plugins: [storage, search] }), { env: { ...env, DATA_DIR: 'memory://', SEARCH: 'meilisearch' } }),
  ).rejects.toThrow('plugins.search-meilisearch.url: is required (set MEILISEARCH_URL)');
  await expect(assemble(definePreset({ name: 'p', plugins: [storage] }), { env: { ...env, DATABASE_URL: 'mysql://x' } })).rejects.toThrow(
    'plugins.storage-postgres.url: must be a postgres:// URL (from DATABASE_URL="mysql://x")',
  );
});

test('config: environment overrides the preset and errors name the option and variable', () => {
  const preset = definePreset({ name: 'p', server: { port: 4000 }, plugins: [] });
  expect(loadConfig(preset, {}).server.port).toBe(4000);
  expect(loadConfig(preset, { PORT: '5000', PROTOCOL_NAMESPACE: 'adcp' })).toMatchObject({ server: { port: 5000 }, protocol: { namespace: 'adcp' } });
  expect(() => loadConfig(preset, { PORT: 'abc' })).toThrow(/server\.port: must be an integer \(from PORT/);
  expect(() => loadConfig(preset, { PROTOCOL_NAMESPACE: 'Bad-NS' })).toThrow(/protocol\.namespace: .*\(from PROTOCOL_NAMESPACE\)/);
  expect(() => loadConfig(preset, { LOG_LEVEL: 'loud' })).toThrow(ConfigError);
});
