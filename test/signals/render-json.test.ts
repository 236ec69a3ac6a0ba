import { expect, test } from 'bun:test';
import { declareMembers, prebuiltJson, type JsonPart } from '../../lib/prebuilt-json.ts';
import { SignalRenderer, targetsKey } from '../../plugins/signals/render.ts';
import type { ActivationRow, SignalRow } from '../../plugins/signals/catalog.ts';
import type { Destination } from '../../plugins/signals/inputs.ts';

// get_signals declares its answer's JSON from pieces serialized once per catalog row (render.ts):
// whatever the signal, targets and activations, that JSON is the answer object's, and a row
// rendered again (its pieces reused) gives the same answer.

const base: SignalRow = {
  id: 'sig_a',
  name: 'Sports "fans"',
  description: 'Line\nbreak — \u2028 and é',
  signal_type: 'marketplace',
  data_provider: 'Acme',
  data_provider_domain: 'acme.example',
  coverage_percentage: '12.5',
  cpm: '2.5',
  currency: 'USD',
  tags: ['sports'],
  countries: ['US', 'CA'],
  owner_org: null,
  platforms: [
    { platform: 'the-trade-desk', estimated_activation_duration_minutes: 30 },
    { platform: 'dv360', estimated_activation_duration_minutes: 60 },
  ],
  agents: [{ agent_url: 'https://sales.example/mcp', estimated_activation_duration_minutes: 5 }],
  pricing_options: null,
  value_type: 'binary',
  categories: null,
  value_range: null,
};
const rows: SignalRow[] = [
  base,
  {
    ...base,
    id: 'sig_b',
    signal_type: 'owned',
    data_provider_domain: null,
    cpm: null,
    currency: null,
    countries: [],
    value_type: 'categorical',
    categories: ['a', 'b'],
  },
  {
    ...base,
    id: 'sig_c',
    signal_type: 'custom',
    value_type: 'numeric',
    value_range: { min: 0, max: 100 },
    pricing_options: [{ pricing_option_id: 'po_flat', model: 'flat_fee', amount: 10, period: 'monthly', currency: 'EUR' }],
  },
];
const activations: ActivationRow[] = [
  {
    id: '1',
    signal_id: 'sig_a',
    destination_key: 'platform:the-trade-desk',
    destination: {},
    status: 'live',
    activation_key: { type: 'segment_id', segment_id: 'ttd_1' },
    estimated_minutes: '30',
    deployed_at: '2026-01-01T00:00:00Z',
  },
  {
    id: '2',
    signal_id: 'sig_c',
    destination_key: 'platform:dv360',
    destination: {},
    status: 'pending',
    activation_key: null,
    estimated_minutes: '45',
    deployed_at: null,
  },
];
const targetSets: Array<Destination[] | undefined> = [
  undefined,
  [{ type: 'platform', platform: 'the-trade-desk' }],
  [
    { type: 'agent', agent_url: 'https://sales.example/mcp', account: 'acct 1' },
    { type: 'platform', platform: 'dv360' },
  ],
];

test('a get_signals answer declares the JSON of its object, and is the same rendered afresh or from pieces built for other calls', () => {
  const options = { agentUrl: 'https://signals.example', agentActivationMinutes: 60 };
  const renderer = new SignalRenderer(options);
  for (let pass = 0; pass < 2; pass++) {
    for (const targets of targetSets) {
      for (const acts of [[], activations]) {
        const json: JsonPart[] = ['['];
        const signals = rows.map((row, i) => {
          if (i) json.push(',');
          return renderer.render(row, targets, targetsKey(targets), acts, json);
        });
        json.push(']');
        const body = declareMembers({ signals, cache_scope: 'public', pagination: { has_more: false } }, { signals: json });
        // What a renderer that has built nothing yet answers: pieces kept for other targets or activations are not reused here.
        const fresh = rows.map((row) => new SignalRenderer(options).render(row, targets, targetsKey(targets), acts, []));
        expect(signals).toEqual(fresh);
        expect(prebuiltJson(body)!.json).toBe(JSON.stringify(body));
        expect(`"${prebuiltJson(body)!.quoted}"`).toBe(JSON.stringify(JSON.stringify(body)));
      }
    }
  }
});
