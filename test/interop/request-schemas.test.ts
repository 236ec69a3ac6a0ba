import { expect, test } from 'bun:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import * as v from 'valibot';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { adcpRequestSchema } from '../../lib/adcp/request-schemas.ts';
import { ERROR_CODES_3_0, ERROR_CODES_3_1, standardErrorCode } from '../../lib/adcp/error-codes.ts';
import { getSignalsInput, activateSignalInput } from '../../plugins/signals/inputs.ts';
import { forEachDatabase } from '../support/db.ts';
import { schemaErrors } from '../support/schemas.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';
import { REFERENCE } from '../support/reference.ts';

// Tools publish AdCP's full request schemas (vendored, dereferenced, without prose): they must judge
// requests exactly as the published 3.1.19 schemas do, and the valibot inputs must keep their fields.
const reference = join(REFERENCE, 'schemas');
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const vendored = (file: string) => ajv.compile(adcpRequestSchema(file));

const SAMPLES: Record<string, unknown[]> = {
  'signals/get-signals-request.json': [
    { signal_spec: 'cars' },
    { signal_ids: [{ source: 'catalog', data_provider_domain: 'p.example', id: 'x' }] },
    { signal_refs: [{ scope: 'signal_source', signal_source_url: 'https://a.example/mcp', signal_id: 'x' }], pagination: { max_results: 5 } },
    { signal_ids: [{ source: 'catalog', id: 'x' }] },
    { discovery_mode: 'wholesale', signal_spec: 'x' },
    { signal_spec: 'x', pagination: { max_results: 500 } },
    { signal_spec: 'x', account: { account_id: 'a', extra: 1 } },
    {},
  ],
  'signals/activate-signal-request.json': [
    { signal_agent_segment_id: 's', destinations: [{ type: 'platform', platform: 'p' }], idempotency_key: 'k'.repeat(16) },
    { signal_agent_segment_id: 's', destinations: [{ type: 'agent', agent_url: 'nope' }], idempotency_key: 'k'.repeat(16) },
    { signal_agent_segment_id: 's', destinations: [] },
  ],
  'protocol/get-adcp-capabilities-request.json': [{}, { protocols: ['signals'] }, { protocols: ['nothing'] }],
  'protocol/get-task-status-request.json': [{ task_id: 't' }, {}],
  'media-buy/sync-audiences-request.json': [
    {
      idempotency_key: 'k'.repeat(16),
      account: { account_id: 'a' },
      audiences: [{ audience_id: 'x', add: [{ external_id: 'e', hashed_email: 'a'.repeat(64) }] }],
    },
    {
      idempotency_key: 'k'.repeat(16),
      account: { account_id: 'a' },
      audiences: [{ audience_id: 'x', add: [{ external_id: 'e', hashed_email: 'bob@example.com' }] }],
    },
    { idempotency_key: 'k'.repeat(16), account: { account_id: 'a' }, delete_missing: true },
  ],
  'media-buy/log-event-request.json': [
    { idempotency_key: 'k'.repeat(16), event_source_id: 's', events: [{ event_id: 'e', event_type: 'purchase', event_time: '2026-03-02T00:00:00Z' }] },
    { idempotency_key: 'k'.repeat(16), event_source_id: 's', events: [] },
  ],
  'media-buy/sync-catalogs-request.json': [
    { idempotency_key: 'k'.repeat(16), account: { account_id: 'a' }, catalogs: [{ catalog_id: 'c', type: 'product', url: 'https://feeds.example/p.json' }] },
    { idempotency_key: 'k'.repeat(16), account: { account_id: 'a' }, catalogs: [{ catalog_id: 'c', type: 'cars' }] },
  ],
  'governance/sync-plans-request.json': [
    {
      idempotency_key: 'k'.repeat(16),
      plans: [
        {
          plan_id: 'p',
          brand: { domain: 'a.example' },
          objectives: 'o',
          budget: { total: 1, currency: 'USD', reallocation_unlimited: true },
          flight: { start: '2026-03-01T00:00:00Z', end: '2026-04-01T00:00:00Z' },
          custom_policies: [{ policy_id: 'x', enforcement: 'must', policy: 'p', exemplars: { pass: [{ scenario: 's', explanation: 'e' }] } }],
        },
      ],
    },
    {
      idempotency_key: 'k'.repeat(16),
      plans: [
        {
          plan_id: 'p',
          brand: { domain: 'a.example' },
          objectives: 'o',
          budget: { total: 1, currency: 'USD' },
          flight: { start: '2026-03-01T00:00:00Z', end: '2026-04-01T00:00:00Z' },
        },
      ],
    },
  ],
  'governance/check-governance-request.json': [{ plan_id: 'p', caller: 'https://s.example' }, { plan_id: 'p' }],
  'brand/get-brand-identity-request.json': [{ brand_id: 'b', fields: ['logos'] }, { brand_id: 'b', fields: ['logo'] }, {}],
  'property/create-property-list-request.json': [
    { idempotency_key: 'k'.repeat(16), name: 'n', base_properties: [{ selection_type: 'identifiers', identifiers: [{ type: 'domain', value: 'a.example' }] }] },
    { idempotency_key: 'k'.repeat(16), name: 'n', base_properties: [{ selection_type: 'publisher_tags', publisher_domain: 'A.example', tags: ['x'] }] },
    { idempotency_key: 'k'.repeat(16), name: 'n', filters: { channels_any: ['tv'] } },
  ],
  'property/get-property-list-request.json': [
    { list_id: 'l', pagination: { max_results: 10_000 } },
    { list_id: 'l', pagination: { max_results: 10_001 } },
  ],
  'property/validate-property-delivery-request.json': [
    { list_id: 'l', records: [{ identifier: { type: 'domain', value: 'a.example' }, impressions: 1 }] },
    { list_id: 'l', records: [] },
  ],
  'collection/create-collection-list-request.json': [
    {
      idempotency_key: 'k'.repeat(16),
      name: 'n',
      base_collections: [{ selection_type: 'distribution_ids', identifiers: [{ type: 'imdb_id', value: 'tt1' }] }],
    },
    { idempotency_key: 'k'.repeat(16), name: 'n', filters: { kinds: ['movie'] } },
  ],
  'collection/list-collection-lists-request.json': [{ name_contains: 'x', pagination: { max_results: 100 } }, { pagination: { max_results: 101 } }],
  'content-standards/create-content-standards-request.json': [
    { idempotency_key: 'k'.repeat(16), scope: { languages_any: ['en'] }, policies: [{ policy_id: 'p', enforcement: 'must', policy: 'No gambling' }] },
    { idempotency_key: 'k'.repeat(16), scope: { languages_any: ['en'] }, policies: [{ policy_id: 'p', enforcement: 'always', policy: 'x' }] },
    { idempotency_key: 'k'.repeat(16), scope: { channels_any: ['display'] }, registry_policy_ids: ['r'] },
  ],
  'content-standards/calibrate-content-request.json': [
    { idempotency_key: 'k'.repeat(16), standards_id: 's', artifact: { property_rid: 'p', artifact_id: 'a', assets: [{ type: 'text', content: 'x' }] } },
    { idempotency_key: 'k'.repeat(16), standards_id: 's', artifact: { artifact_id: 'a', assets: [] } },
  ],
  'content-standards/get-media-buy-artifacts-request.json': [
    { media_buy_id: 'm', pagination: { max_results: 10_000 } },
    { media_buy_id: 'm', pagination: { max_results: 10_001 } },
  ],
  'account/sync-governance-request.json': [
    {
      idempotency_key: 'k'.repeat(16),
      accounts: [
        {
          account: { account_id: 'a' },
          governance_agents: [{ url: 'https://g.example', authentication: { schemes: ['Bearer'], credentials: 'c'.repeat(32) } }],
        },
      ],
    },
    {
      idempotency_key: 'k'.repeat(16),
      accounts: [
        {
          account: { account_id: 'a' },
          governance_agents: [{ url: 'http://g.example', authentication: { schemes: ['Bearer'], credentials: 'c'.repeat(32) } }],
        },
      ],
    },
  ],
};

test('vendored request schemas validate exactly like the published 3.1.19 set', () => {
  for (const [file, samples] of Object.entries(SAMPLES)) {
    const validate = vendored(file);
    for (const sample of samples) expect({ file, sample, ok: validate(sample) }).toEqual({ file, sample, ok: schemaErrors(file, sample).length === 0 });
  }
});

test('the vendored error codes are the published enums; every mapped code is in 3.0.6', () => {
  for (const [version, set] of [
    ['3.0.6', ERROR_CODES_3_0],
    ['3.1.19', ERROR_CODES_3_1],
  ] as const) {
    expect([...set]).toEqual(JSON.parse(readFileSync(join(reference, version, 'enums/error-code.json'), 'utf8')).enum);
  }
  for (const seed of [
    'SIGNAL_AGENT_SEGMENT_NOT_FOUND',
    'AGENT_NOT_FOUND',
    'AGENT_ACCESS_DENIED',
    'DEPLOYMENT_UNAUTHORIZED',
    'ALREADY_ACTIVATED',
    'ACTIVATION_FAILED',
    'UNAUTHORIZED',
    'NOT_FOUND',
  ]) {
    expect(ERROR_CODES_3_0.has(standardErrorCode(seed, 400))).toBe(true);
  }
  expect(standardErrorCode('IDEMPOTENCY_IN_FLIGHT', 409)).toBe('IDEMPOTENCY_IN_FLIGHT');
});

test('the signals inputs keep request fields AdCP allows (nothing is stripped)', () => {
  const got = v.parse(getSignalsInput, { signal_spec: 'x', ext: { a: 1 }, fields: ['name'], account: { account_id: 'acc' }, vendor_hint: true });
  expect(got).toMatchObject({ ext: { a: 1 }, fields: ['name'], account: { account_id: 'acc' }, vendor_hint: true });
  const act = v.parse(activateSignalInput, { signal_agent_segment_id: 's', destinations: [{ type: 'platform', platform: 'p', extra: 1 }], ext: { b: 2 } });
  expect(act).toMatchObject({ ext: { b: 2 }, destinations: [{ extra: 1 }] });
});

forEachDatabase<SignalsServer>(
  'published tool schemas',
  (adapter, schema) => startSignalsServer(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  (s) => s.server.close(),
  (get) => {
    test('tools/list publishes the AdCP request schema of each signals task, with the envelope members', async () => {
      const res = await get().server.fetch('/mcp', {
        method: 'POST',
        headers: { accept: 'application/json', 'mcp-protocol-version': '2025-06-18' },
        token: TOKEN,
        json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      const tools = Object.fromEntries(((await res.json()) as any).result.tools.map((t: any) => [t.name, t.inputSchema]));
      expect(Object.keys(tools.get_signals.properties)).toEqual(
        expect.arrayContaining(['signal_spec', 'signal_ids', 'signal_refs', 'account', 'ext', 'pagination', 'destinations', 'context']),
      );
      expect(Object.keys(tools.activate_signal.properties)).toEqual(
        expect.arrayContaining(['pricing_option_id', 'account', 'ext', 'push_notification_config', 'idempotency_key']),
      );
      expect(tools.activate_signal.required).toEqual(expect.arrayContaining(['idempotency_key', 'signal_agent_segment_id', 'destinations']));
      expect(Object.keys(tools.get_adcp_capabilities.properties)).toEqual(expect.arrayContaining(['protocols', 'context', 'ext']));
      expect(JSON.stringify(tools)).not.toContain('$ref');
      expect(JSON.stringify(tools)).not.toContain('"description":"Request parameters');
    });
  },
);
