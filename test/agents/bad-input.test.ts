import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, clientFor, type TaskClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from './fixture.ts';

const TTD = { type: 'platform', platform: 'the-trade-desk' };
const KEY = 'bad-input-key-000000001';
const SIG = 'sig_retail_pet_owners';

/** [task, arguments, field the INVALID_REQUEST must name]. */
const CASES: [string, Record<string, unknown>, string][] = [
  ['get_signals', {}, 'signal_spec'],
  ['get_signals', { signal_spec: 5 }, 'signal_spec'],
  ['get_signals', { signal_spec: 'pets', deliver_to: { deployments: ['the-trade-desk'], countries: ['US'] } }, 'deliver_to.deployments[0]'],
  ['get_signals', { signal_spec: 'pets', deliver_to: { deployments: [TTD] } }, 'deliver_to.countries'],
  ['get_signals', { signal_spec: 'pets', countries: ['usa'] }, 'countries[0]'],
  ['get_signals', { signal_spec: 'pets', destinations: Array.from({ length: 51 }, () => TTD) }, 'destinations'],
  ['get_signals', { signal_spec: 'pets', max_results: 'ten' }, 'max_results'],
  ['get_signals', { signal_spec: 'pets', max_results: 0 }, 'max_results'],
  ['get_signals', { signal_spec: 'pets', pagination: { max_results: 101 } }, 'pagination.max_results'],
  ['get_signals', { signal_spec: 'pets', pagination: { cursor: 'not-a-cursor' } }, 'pagination.cursor'],
  ['get_signals', { signal_spec: 'pets', pagination: { page: 2 } }, 'pagination.page'],
  ['get_signals', { signal_ids: [{ source: 'catalog', id: 'sig_x' }] }, 'signal_ids[0].data_provider_domain'],
  ['get_signals', { signal_ids: [] }, 'signal_ids'],
  ['get_signals', { signal_refs: [{ scope: 'galaxy', signal_id: 'x' }] }, 'signal_refs[0].scope'],
  ['get_signals', { signal_spec: 'pets', filters: { min_coverage_percentage: 101 } }, 'filters.min_coverage_percentage'],
  ['get_signals', { signal_spec: 'pets', filters: { data_providers: [''] } }, 'filters.data_providers[0]'],
  ['get_signals', { signal_spec: 'pets', filters: 'cheap' }, 'filters'],
  ['get_signals', { signal_spec: 'pets', discovery_mode: 'firehose' }, 'discovery_mode'],
  ['get_signals', { signal_spec: 'pets', account: { account_id: '' } }, 'account.account_id'],
  ['get_signals', { signal_spec: 'pets', filters: { catalog_types: ['premium'] } }, 'filters.catalog_types[0]'],
  ['get_signals', { signal_spec: 'pets', filters: { max_cpm: -1 } }, 'filters.max_cpm'],
  ['get_signals', { signal_spec: 'pets', context: 'not an object' }, 'context'],
  ['get_signals', { signal_spec: 'x'.repeat(2001) }, 'signal_spec'],
  ['activate_signal', { deployments: [TTD], idempotency_key: KEY }, 'signal_agent_segment_id'],
  ['activate_signal', { signal_agent_segment_id: SIG, idempotency_key: KEY }, 'destinations'],
  ['activate_signal', { signal_agent_segment_id: SIG, deployments: 'the-trade-desk', idempotency_key: KEY }, 'deployments'],
  ['activate_signal', { signal_agent_segment_id: SIG, deployments: ['the-trade-desk'], idempotency_key: KEY }, 'deployments[0]'],
  ['activate_signal', { signal_agent_segment_id: SIG, deployments: Array.from({ length: 21 }, () => TTD), idempotency_key: KEY }, 'deployments'],
  [
    'activate_signal',
    { signal_agent_segment_id: SIG, deployments: [{ type: 'agent', agent_url: 'not a url' }], idempotency_key: KEY },
    'deployments[0].agent_url',
  ],
  ['activate_signal', { signal_agent_segment_id: SIG, deployments: [TTD] }, 'idempotency_key'],
  ['activate_signal', { signal_agent_segment_id: SIG, deployments: [TTD], idempotency_key: 'short' }, 'idempotency_key'],
  ['activate_signal', { signal_agent_segment_id: SIG, deployments: [TTD], idempotency_key: 42 }, 'idempotency_key'],
  [
    'activate_signal',
    { signal_agent_segment_id: SIG, deployments: [TTD], idempotency_key: KEY, push_notification_config: { url: 'https://buyer.example/hook' } },
    'push_notification_config.operation_id',
  ],
  [
    'activate_signal',
    {
      signal_agent_segment_id: SIG,
      deployments: [TTD],
      idempotency_key: KEY,
      push_notification_config: { url: 'ftp://buyer.example/hook', operation_id: 'op-1' },
    },
    'push_notification_config.url',
  ],
  ['activate_signal', { signal_agent_segment_id: SIG, deployments: [TTD, TTD], idempotency_key: KEY }, 'deployments'],
  ['activate_signal', { signal_agent_segment_id: SIG, deployments: [TTD], pricing_option_id: 'po_other_cpm', idempotency_key: KEY }, 'pricing_option_id'],
  ['get_task_status', {}, 'task_id'],
  ['get_task_status', { task_id: 5 }, 'task_id'],
  ['get_proto_capabilities', { protocols: 'signals' }, 'protocols'],
  ['get_proto_capabilities', { protocols: ['television'] }, 'protocols[0]'],
];

forEachDatabase(
  'bad input',
  (adapter, schema) => startSignalsServer(adapter, schema),
  async (s) => s.server.close(),
  (get) => {
    for (const host of HOSTS) {
      describe(host, () => {
        let client: TaskClient;
        beforeAll(async () => {
          client = await clientFor(host, get().server, TOKEN);
        });
        afterAll(async () => client?.close());

        test('every task answers INVALID_REQUEST naming the field', async () => {
          for (const [task, args, field] of CASES) {
            const { ok, body } = await client.call(task, args);
            expect({ task, field, ok, code: body.code }).toEqual({ task, field, ok: false, code: 'INVALID_REQUEST' });
            expect({ task, field: body.field }).toEqual({ task, field });
            expect(body.message).toStartWith(field);
          }
        });
      });
    }

    test('a REST call with bad input is a 400 and nothing is stored', async () => {
      const s: SignalsServer = get();
      const res = await s.server.fetch('/tasks/activate_signal', {
        method: 'POST',
        token: TOKEN,
        json: { signal_agent_segment_id: SIG, deployments: ['the-trade-desk'], idempotency_key: KEY },
      });
      expect(res.status).toBe(400);
      const malformed = await s.server.fetch('/tasks/get_signals', {
        method: 'POST',
        token: TOKEN,
        body: '{"signal_spec":',
        headers: { 'content-type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
      const db = s.server.deployment.get(Database);
      for (const table of ['signal_activations', 'tasks', 'task_status_history', 'idempotency_keys']) {
        const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)}`);
        expect({ table, n: row!.n }).toEqual({ table, n: 0 });
      }
    });
  },
);
