import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient, restClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';

// The idempotency hash covers the operation, not the transport envelope: a retry with a new
// context (correlation id) or version envelope replays. A conflict carries
// nothing derived from the earlier call.
const TTD = { type: 'platform', platform: 'the-trade-desk' };

forEachDatabase<SignalsServer>(
  'idempotency and the envelope',
  (adapter, schema) => startSignalsServer(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  (s) => s.server.close(),
  (get) => {
    test('a retry with another context replays, echoing the retry’s own context', async () => {
      const client = await mcpClient(get().server, TOKEN);
      const args = { signal_agent_segment_id: 'sig_geo_gym_goers', destinations: [TTD], idempotency_key: 'envelope-replay-key-0001' };
      const first = await client.call('activate_signal', { ...args, context: { correlation_id: 'c-1' }, adcp_major_version: 3 });
      const retry = await client.call('activate_signal', { ...args, context: { correlation_id: 'c-2' }, adcp_version: '3.1' });
      const bare = await client.call('activate_signal', args);
      await client.close();
      expect(first.ok && retry.ok && bare.ok).toBe(true);
      expect(retry.body).toEqual({ ...first.body, context: { correlation_id: 'c-2' }, replayed: true });
      const { context: _c, ...withoutContext } = first.body;
      expect(bare.body).toEqual({ ...withoutContext, replayed: true });
      const db = get().server.deployment.get(Database);
      const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM tasks WHERE state->>'signal_id' = 'sig_geo_gym_goers'`);
      expect(row!.n).toBe(1);
    });

    test('a conflict body carries only code, message, status and the correlation ids', async () => {
      const rest = restClient(get().server, TOKEN);
      const key = 'envelope-conflict-key-01';
      await rest.call('activate_signal', {
        signal_agent_segment_id: 'sig_geo_qsr_visitors',
        destinations: [TTD],
        idempotency_key: key,
        context: { correlation_id: 'a' },
      });
      const res = await get().server.fetch('/tasks/activate_signal', {
        method: 'POST',
        token: TOKEN,
        json: { signal_agent_segment_id: 'sig_geo_luxury_mall', destinations: [TTD], idempotency_key: key, context: { correlation_id: 'b' } },
      });
      expect(res.status).toBe(409);
      const body = (await res.json()) as any;
      const error = { code: 'IDEMPOTENCY_CONFLICT', message: expect.any(String), recovery: 'correctable' };
      expect(body).toEqual({
        error: 'idempotency_conflict',
        status: 'failed',
        code: 'IDEMPOTENCY_CONFLICT',
        message: expect.any(String),
        errors: [error],
        adcp_error: error,
        context: { correlation_id: 'b' },
      });
      // Nothing of the earlier call (its task, targets, signal, context) leaks into the answer.
      const text = JSON.stringify(body);
      for (const leak of ['task_id', 'deployments', 'sig_geo_qsr_visitors', 'sig_geo_luxury_mall', '"a"']) expect(text).not.toContain(leak);
    });
  },
);

forEachDatabase<SignalsServer>(
  'PUSH_OPERATION_ID',
  (adapter, schema) => startSignalsServer(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp', PUSH_OPERATION_ID: 'required' } }),
  (s) => s.server.close(),
  (get) => {
    test('the setting makes operation_id required in the adcp namespace too', async () => {
      const { body } = await restClient(get().server, TOKEN).call('get_signals', {
        signal_spec: 'cars',
        push_notification_config: { url: 'https://buyer.example/h' },
      });
      expect([body.code, body.field]).toEqual(['INVALID_REQUEST', 'push_notification_config.operation_id']);
    });
  },
);
