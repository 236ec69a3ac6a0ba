import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { definePlugin } from '../../core/plugin.ts';
import { Database } from '../../core/ports/database.ts';
import { TaskNotifier } from '../../core/ports/task-notifier.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from './fixture.ts';

/** A notifier that can be told to fail, standing in for any failure while the task record is written. */
const flaky = { fail: false };
const flakyNotifier = definePlugin({
  name: 'test-flaky-notifier',
  provides: [TaskNotifier],
  init(_deps, kernel) {
    kernel.provide(TaskNotifier, {
      async statusChanged() {
        if (flaky.fail) throw new Error('notifier down');
      },
      checkRegistration() {},
    });
  },
});

forEachDatabase<SignalsServer>(
  'activation atomicity',
  (adapter, schema) => startSignalsServer(adapter, schema, { extra: [flakyNotifier()] }),
  (s) => s.server.close(),
  (get) => {
    test('activation rows commit with the task record or not at all; a retry after a failure activates', async () => {
      const db = get().server.deployment.get(Database);
      const count = async () => (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM signal_activations`))[0]!.n;
      const tasks = async () => (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM tasks`))[0]!.n;
      const client = restClient(get().server, TOKEN);
      const args = { signal_agent_segment_id: 'sig_auto_intenders_suv', deployments: [{ type: 'platform', platform: 'the-trade-desk' }] };
      const [activationsBefore, tasksBefore] = [await count(), await tasks()];

      flaky.fail = true;
      const failed = await client.call('activate_signal', { ...args, idempotency_key: 'atomic-attempt-0000001' });
      expect(failed.ok).toBe(false);
      expect([await count(), await tasks()]).toEqual([activationsBefore, tasksBefore]);

      flaky.fail = false;
      const retried = await client.call('activate_signal', { ...args, idempotency_key: 'atomic-attempt-0000002' });
      expect(retried.ok).toBe(true);
      expect(retried.body.status).toBe('submitted');
      expect([await count(), await tasks()]).toEqual([activationsBefore + 1, tasksBefore + 1]);
    });
  },
);
