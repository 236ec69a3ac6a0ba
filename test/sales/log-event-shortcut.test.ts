import { expect, test } from 'bun:test';
import { eventSchema, fullEventSchemaForTests } from '../../plugins/sales-buyer-data/conversions.ts';
import { sha256 } from './support/sha256.ts';
import { memberPaths, mutate, schemaAnswer } from '../support/shortcut-oracle.ts';

// log_event's event schema shortcut (fastAccept) answers exactly as the schema: same success, same
// output, same first issue, for valid events and every one-member mutation of them.

const SEEDS: unknown[] = [
  { event_id: 'e-1', event_type: 'purchase', event_time: '2026-01-01T00:00:00Z' },
  { event_id: 'e-2', event_type: 'lead', event_time: '2026-01-01T00:00:00.123+02:00', custom_data: { value: 10, currency: 'USD', extra: 'x' } },
  { event_id: 'e-3', event_type: 'custom', event_time: '2026-01-01 00:00:00Z', action_source: 'website', custom_event_name: 'x', other: { a: 1 } },
  { event_id: 'e-4', event_type: 'page_view', event_time: '2026-01-01T00:00:00Z', user_match: { hashed_email: sha256('a@b.example') } },
  { event_id: 'e-5', event_type: 'refund', event_time: '2026-01-01T00:00:00Z', event_source_url: 'https://shop.example/x', custom_data: {} },
];

const WEIRD: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'a'.repeat(257),
  'a'.repeat(129),
  'usd',
  'USD',
  'purchase',
  'website',
  'carol@example.com',
  '2026-01-01',
  '2026-13-01T00:00:00Z',
  'https://a.example/',
  -1,
  -0,
  0,
  1e9,
  1e9 + 1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  [],
  [1],
  {},
  { value: 1 },
];

test('the shortcut answers every event and one-member mutation as the schema does', () => {
  const inputs: unknown[] = [...SEEDS, ...WEIRD];
  for (const seed of SEEDS) {
    for (const path of memberPaths(seed)) for (const value of WEIRD) inputs.push(mutate(seed, path, value));
    for (const key of ['custom_data', 'user_match', 'event_source_url', 'action_source', 'custom_event_name', 'constructor', 'extra'])
      for (const value of WEIRD) inputs.push(mutate(seed, [key], value));
    inputs.push(JSON.parse(JSON.stringify(seed).replace('{"event_id"', '{"__proto__":{"x":1},"event_id"')));
  }
  let accepted = 0;
  for (const input of inputs) {
    const fast = schemaAnswer(eventSchema, input);
    expect({ input, ...fast }).toEqual({ input, ...schemaAnswer(fullEventSchemaForTests, input) });
    if (fast.ok) accepted++;
  }
  expect(inputs.length).toBeGreaterThan(500);
  expect(accepted).toBeGreaterThan(50);
});
