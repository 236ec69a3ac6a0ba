import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { assemble } from '../../core/deployment.ts';
import { definePreset, loadConfig, ConfigError } from '../../core/config.ts';
import { definePlugin } from '../../core/plugin.ts';
import { token } from '../../core/token.ts';

const Thing = token<{ hello(): string }>('test.thing');
const provider = (name: string) => definePlugin({ name, provides: [Thing], register: (ctx) => ctx.provide(Thing, { hello: () => name }) });
const consumer = definePlugin({ name: 'consumer', requires: [Thing], options: v.object({ greeting: v.optional(v.string(), 'hi') }) });

test('assembly fails fast naming the plugin and the missing port', async () => {
  const preset = definePreset({ name: 'p', plugins: [consumer()] });
  await expect(assemble(preset, { env: {} })).rejects.toThrow('Plugin "consumer" requires port "test.thing", which no plugin of preset "p" provides');
});

test('two providers of one port are named', async () => {
  const preset = definePreset({ name: 'p', plugins: [provider('one')(), provider('two')()] });
  await expect(assemble(preset, { env: {} })).rejects.toThrow('Port "test.thing" is provided by both "one" and "two"');
});

test('providers start before their dependents and stop after them', async () => {
  const order: string[] = [];
  const a = definePlugin({ name: 'a', requires: [Thing], start: () => void order.push('start a'), stop: () => void order.push('stop a') });
  const b = definePlugin({
    name: 'b',
    provides: [Thing],
    register: (ctx) => ctx.provide(Thing, { hello: () => 'b' }),
    start: () => void order.push('start b'),
    stop: () => void order.push('stop b'),
  });
  const d = await assemble(definePreset({ name: 'p', plugins: [a(), b()] }), { env: { LOG_LEVEL: 'silent' } });
  expect(d.get(Thing).hello()).toBe('b');
  await Promise.all([d.start(), d.start()]); // idempotent
  await d.stop();
  await d.stop(); // idempotent
  expect(order).toEqual(['start b', 'start a', 'stop a', 'stop b']);
});

test('plugin options are validated with the option path named', () => {
  expect(() => consumer({ greeting: 3 } as any)).toThrow(/plugins\.consumer\.greeting/);
});

test('config: environment overrides the preset and errors name the option and variable', () => {
  const preset = definePreset({ name: 'p', server: { port: 4000 }, plugins: [] });
  expect(loadConfig(preset, {}).server.port).toBe(4000);
  expect(loadConfig(preset, { PORT: '5000', PROTOCOL_NAMESPACE: 'adcp' })).toMatchObject({ server: { port: 5000 }, protocol: { namespace: 'adcp' } });
  expect(() => loadConfig(preset, { PORT: 'abc' })).toThrow(/server\.port: must be an integer \(from PORT/);
  expect(() => loadConfig(preset, { PROTOCOL_NAMESPACE: 'Bad-NS' })).toThrow(/protocol\.namespace: .*\(from PROTOCOL_NAMESPACE\)/);
  expect(() => loadConfig(preset, { DATABASE_URL: 'mysql://x' })).toThrow(/database\.url: must be a postgres:\/\/ URL/);
  expect(() => loadConfig(preset, { LOG_LEVEL: 'loud' })).toThrow(ConfigError);
});
