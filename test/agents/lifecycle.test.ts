import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { TaskNotifier, type TaskNotifierPort, type TaskStatusChange } from '../../core/ports/task-notifier.ts';
import { forEachDatabase } from '../support/db.ts';
import { a2aBody, restClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from './fixture.ts';

/** A notifier like the webhooks plugin's: it writes an outbox row with the caller's transaction. */
class RecordingNotifier implements TaskNotifierPort {
  readonly changes: TaskStatusChange[] = [];
  async statusChanged(tx: Queryable, change: TaskStatusChange): Promise<void> {
    await tx.query(sql`CREATE TABLE IF NOT EXISTS test_outbox (task_id uuid, sequence int, status text)`);
    await tx.query(sql`INSERT INTO test_outbox VALUES (${change.taskId}::uuid, ${change.sequence}::int, ${change.status}::text)`);
    this.changes.push(change);
  }
  checkRegistration(): void {}
}

const TTD = { type: 'platform', platform: 'the-trade-desk' };

forEachDatabase(
  'task lifecycle',
  async (adapter, schema) => {
    const notifier = new RecordingNotifier();
    return { s: await startSignalsServer(adapter, schema, { overrides: [[TaskNotifier, notifier]] }), notifier };
  },
  async ({ s }) => s.server.close(),
  (get) => {
    const s = (): SignalsServer => get().s;

    test('each status change is recorded in history and handed to the notifier with the webhook fields', async () => {
      const push = {
        url: 'https://buyer.example/webhooks/adcp',
        operation_id: 'op-lifecycle-1',
        authentication: { schemes: ['HMAC-SHA256'], credentials: 'x'.repeat(32) },
      };
      const { body } = await restClient(s().server, TOKEN).call('activate_signal', {
        signal_agent_segment_id: 'sig_travel_cruise_intenders',
        deployments: [TTD],
        idempotency_key: 'lifecycle-key-00000001',
        push_notification_config: push,
        context: { campaign: 'c-1' },
      });
      expect(body.status).toBe('submitted');
      await s().runDue();
      const changes = get().notifier.changes.filter((c) => c.taskId === body.task_id);
      expect(changes.map((c) => [c.sequence, c.previousStatus, c.status, c.initial])).toEqual([
        [1, null, 'submitted', true],
        [2, 'submitted', 'working', false],
        [3, 'working', 'completed', false],
      ]);
      const done = changes[2]!;
      expect(done).toMatchObject({ taskType: 'activate_signal', protocol: 'signals', operationId: 'op-lifecycle-1', context: { campaign: 'c-1' } });
      expect(done.pushNotificationConfig).toEqual(push);
      expect((done.result as any).deployments[0].is_live).toBe(true);
      expect((done.result as any).context).toEqual({ campaign: 'c-1' });
      expect(Date.parse(done.timestamp)).not.toBeNaN();

      const db = s().server.deployment.get(Database);
      const history = await db.query<{ status: string }>(sql`SELECT status FROM task_status_history WHERE task_id = ${body.task_id}::uuid ORDER BY sequence`);
      expect(history.map((h) => h.status)).toEqual(['submitted', 'working', 'completed']);
      const outbox = await db.query<{ status: string }>(sql`SELECT status FROM test_outbox WHERE task_id = ${body.task_id}::uuid ORDER BY sequence`);
      expect(outbox.map((h) => h.status)).toEqual(['submitted', 'working', 'completed']);

      const polled = await s().server.fetch(`/tasks/${body.task_id}?include_history=true`, { token: TOKEN });
      const status = (await polled.json()) as any;
      expect(status).toMatchObject({ task_id: body.task_id, task_type: 'activate_signal', protocol: 'signals', status: 'completed', has_webhook: true });
      expect(status.history.map((h: any) => h.data.status)).toEqual(['submitted', 'working', 'completed']);
    });

    test('a terminal initial response creates no task and notifies nobody', async () => {
      const before = get().notifier.changes.length;
      const { body } = await restClient(s().server, TOKEN).call('get_signals', {
        signal_spec: 'pets',
        push_notification_config: { url: 'https://buyer.example/hook', operation_id: 'op-sync' },
      });
      expect(body.status).toBe('completed');
      expect(body.task_id).toBeUndefined();
      expect(get().notifier.changes.length).toBe(before);
    });

    test('A2A 0.3 (no A2A-Version): message/send with configuration.pushNotificationConfig, then tasks/get', async () => {
      const rpc = async (method: string, params: unknown) =>
        (await (await s().server.fetch('/a2a', { method: 'POST', token: TOKEN, json: { jsonrpc: '2.0', id: 1, method, params } })).json()) as any;
      const sent = await rpc('message/send', {
        message: {
          kind: 'message',
          messageId: crypto.randomUUID(),
          role: 'user',
          parts: [
            {
              kind: 'data',
              data: {
                skill: 'activate_signal',
                parameters: { signal_agent_segment_id: 'sig_travel_summer_vacationers', deployments: [TTD], idempotency_key: 'a2a-legacy-key-000001' },
              },
            },
          ],
        },
        configuration: { pushNotificationConfig: { url: 'https://buyer.example/a2a-hook', token: 'a2a-token-0123456789' } },
      });
      expect(sent.result.kind).toBe('task');
      expect(sent.result.status.state).toBe('submitted');
      const taskId = sent.result.id;
      const change = get().notifier.changes.find((c) => c.taskId === taskId)!;
      expect(change.a2aPushConfig).toEqual({ url: 'https://buyer.example/a2a-hook', token: 'a2a-token-0123456789' });
      await s().runDue();
      const got = await rpc('tasks/get', { id: taskId });
      expect(got.result.status.state).toBe('completed');
      const data = got.result.artifacts[0].parts.find((p: any) => p.kind === 'data').data;
      expect(data.deployments[0].is_live).toBe(true);
      expect(a2aBody).toBeFunction();
    });
  },
);
