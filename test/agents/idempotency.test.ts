import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient, restClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, OTHER_TOKEN, type SignalsServer } from './fixture.ts';

const TTD = { type: 'platform', platform: 'the-trade-desk' };

forEachDatabase(
  'idempotency',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2025-06-01T12:00:00Z'));
    const s = await startSignalsServer(adapter, schema, { overrides: [[Clock, clock]], idempotency: { replayTtlSeconds: 3600 } });
    return { s, clock };
  },
  async ({ s }) => s.server.close(),
  (get) => {
    const s = (): SignalsServer => get().s;
    const count = async (table: 'signal_activations' | 'tasks', signal: string) => {
      const db = s().server.deployment.get(Database);
      const where = table === 'tasks' ? sql`state->>'signal_id' = ${signal}::text` : sql`signal_id = ${signal}::text`;
      const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)} WHERE ${where}`);
      return row!.n;
    };

    test('same key and payload replays the original response with replayed: true (across hosts)', async () => {
      const rest = restClient(s().server, TOKEN);
      const args = { idempotency_key: 'replay-key-0000000001', signal_agent_segment_id: 'sig_geo_gym_goers', deployments: [TTD], context: { a: 1, b: [1, 2] } };
      const first = await rest.call('activate_signal', args);
      expect(first.ok).toBe(true);
      expect(first.body.replayed).toBeUndefined();
      // Same payload with members in another order: the canonical hash matches.
      const reordered = {
        context: { b: [1, 2], a: 1 },
        deployments: [{ platform: 'the-trade-desk', type: 'platform' }],
        signal_agent_segment_id: 'sig_geo_gym_goers',
        idempotency_key: 'replay-key-0000000001',
      };
      const second = await rest.call('activate_signal', reordered);
      expect(second.body).toEqual({ ...first.body, replayed: true });
      const mcp = await mcpClient(s().server, TOKEN);
      const third = await mcp.call('activate_signal', args);
      await mcp.close();
      expect(third.ok).toBe(true);
      expect(third.body).toEqual({ ...first.body, replayed: true });
      expect(await count('signal_activations', 'sig_geo_gym_goers')).toBe(1);
      expect(await count('tasks', 'sig_geo_gym_goers')).toBe(1);
    });

    test('same key with another payload -> IDEMPOTENCY_CONFLICT carrying only code, message, recovery', async () => {
      const rest = restClient(s().server, TOKEN);
      await rest.call('activate_signal', { idempotency_key: 'conflict-key-00000001', signal_agent_segment_id: 'sig_geo_qsr_visitors', deployments: [TTD] });
      const res = await s().server.fetch('/tasks/activate_signal', {
        method: 'POST',
        token: TOKEN,
        json: { idempotency_key: 'conflict-key-00000001', signal_agent_segment_id: 'sig_geo_luxury_mall', deployments: [TTD] },
      });
      expect(res.status).toBe(409);
      const body = (await res.json()) as any;
      expect(body.code).toBe('IDEMPOTENCY_CONFLICT');
      expect(body.errors).toEqual([{ code: 'IDEMPOTENCY_CONFLICT', message: expect.any(String), recovery: 'correctable' }]);
      expect(await count('signal_activations', 'sig_geo_luxury_mall')).toBe(0);
    });

    test('keys are scoped to the principal', async () => {
      const args = { idempotency_key: 'scoped-key-0000000001', signal_agent_segment_id: 'sig_geo_commuters_urban', deployments: [TTD] };
      const mine = await restClient(s().server, TOKEN).call('activate_signal', args);
      const theirs = await restClient(s().server, OTHER_TOKEN).call('activate_signal', args);
      expect(mine.ok && theirs.ok).toBe(true);
      expect(theirs.body.replayed).toBeUndefined();
      expect(theirs.body.task_id).not.toBe(mine.body.task_id);
      expect(await count('signal_activations', 'sig_geo_commuters_urban')).toBe(2);
    });

    test('past replay_ttl_seconds -> IDEMPOTENCY_EXPIRED (controlled clock)', async () => {
      const rest = restClient(s().server, TOKEN);
      const args = { idempotency_key: 'expiry-key-0000000001', signal_agent_segment_id: 'sig_geo_stadium_visitors', deployments: [TTD] };
      expect((await rest.call('activate_signal', args)).ok).toBe(true);
      get().clock.advance(3599 * 1000);
      expect((await rest.call('activate_signal', args)).body.replayed).toBe(true);
      get().clock.advance(2 * 1000);
      const expired = await rest.call('activate_signal', args);
      expect(expired.ok).toBe(false);
      expect(expired.body.code).toBe('IDEMPOTENCY_EXPIRED');
      expect(await count('signal_activations', 'sig_geo_stadium_visitors')).toBe(1);
    });

    test('a failed execution releases its key: the retry executes again', async () => {
      const rest = restClient(s().server, TOKEN);
      const args = {
        idempotency_key: 'release-key-000000001',
        signal_agent_segment_id: 'sig_geo_airport_travelers',
        deployments: [{ type: 'platform', platform: 'no-such-dsp' }],
      };
      expect((await rest.call('activate_signal', args)).body.code).toBe('DEPLOYMENT_UNAUTHORIZED');
      const again = await rest.call('activate_signal', args);
      expect(again.body.code).toBe('DEPLOYMENT_UNAUTHORIZED');
      expect(again.body.replayed).toBeUndefined();
    });

    test('50 concurrent identical requests execute once', async () => {
      const rest = restClient(s().server, TOKEN);
      const args = { idempotency_key: 'concurrent-key-000001', signal_agent_segment_id: 'sig_health_sleep_improvers', deployments: [TTD] };
      const results = await Promise.all(Array.from({ length: 50 }, () => rest.call('activate_signal', args)));
      expect(results.every((r) => r.ok)).toBe(true);
      expect(results.filter((r) => !r.body.replayed)).toHaveLength(1);
      expect(new Set(results.map((r) => r.body.task_id)).size).toBe(1);
      expect(await count('signal_activations', 'sig_health_sleep_improvers')).toBe(1);
      expect(await count('tasks', 'sig_health_sleep_improvers')).toBe(1);
    });
  },
);
