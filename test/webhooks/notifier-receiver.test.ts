import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import { TaskNotifier, type TaskStatusChange } from '../../core/ports/task-notifier.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import signerHmac from '../../plugins/signer-hmac-legacy/index.ts';
import { createWebhookReceiver } from '../../plugins/webhooks/receiver.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';

const TOKEN = 'bearer-token-abcdefghij';

forEachDatabase<TestServer>(
  'webhook notifier and receiver',
  (adapter, schema) => startServer(adapter, schema, [signerHmac(), webhooks({ outbox: { workers: false } })], { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  (s) => s.close(),
  (get) => {
    const change = (over: Partial<TaskStatusChange>): TaskStatusChange => ({
      taskId: 'task-1',
      taskType: 'activate_signal',
      protocol: 'signals',
      principalId: 'p',
      status: 'working',
      previousStatus: 'submitted',
      initial: false,
      sequence: 2,
      timestamp: '2026-05-01T00:00:00.000Z',
      message: 'activating',
      result: { percentage: 50 },
      context: { ref: 'x' },
      contextId: 'ctx-1',
      pushNotificationConfig: { url: 'https://buyer.example/hook', operation_id: 'op-42' },
      operationId: 'op-42',
      a2aPushConfig: { url: 'https://buyer.example/a2a' },
      ...over,
    });

    test('one webhook per status change (both registrations), none for the initial response; rollback leaves nothing', async () => {
      const db = get().deployment.get(Database);
      const notifier = get().deployment.get(TaskNotifier);
      await db.transaction((tx) => notifier.statusChanged(tx, change({ initial: true, status: 'submitted', previousStatus: null })));
      await db.transaction((tx) => notifier.statusChanged(tx, change({})));
      await db.transaction((tx) =>
        notifier.statusChanged(
          tx,
          change({ status: 'completed', previousStatus: 'working', result: { activation_key: { type: 'segment_id', segment_id: 's1' } } }),
        ),
      );
      await expect(
        db.transaction(async (tx) => {
          await notifier.statusChanged(tx, change({ taskId: 'task-2' }));
          throw new Error('status change failed');
        }),
      ).rejects.toThrow();
      const rows = await db.query<any>(sql`SELECT format, task_id, operation_id, body, idempotency_key, auth_mode FROM webhook_outbox ORDER BY id`);
      expect(rows.map((r) => [r.format, JSON.parse(r.body).status?.state ?? JSON.parse(r.body).status])).toEqual([
        ['mcp', 'working'],
        ['a2a', 'working'],
        ['mcp', 'completed'],
        ['a2a', 'completed'],
      ]);
      const mcp = JSON.parse(rows[0].body);
      expect(mcp).toMatchObject({
        task_id: 'task-1',
        operation_id: 'op-42',
        task_type: 'activate_signal',
        domain: 'signals',
        context: { ref: 'x' },
        result: { percentage: 50 },
      });
      expect(mcp.idempotency_key).toBe(rows[0].idempotency_key);
      expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(4);
      const update = JSON.parse(rows[1].body);
      expect(update).toMatchObject({ kind: 'status-update', taskId: 'task-1', status: { state: 'working' } });
      expect(update.status.message.parts[0]).toEqual({ kind: 'data', data: { percentage: 50 } }); // interim: first data part
      expect(JSON.parse(rows[3].body)).toMatchObject({ kind: 'task', id: 'task-1', artifacts: [{ parts: [{ kind: 'data' }] }] });
      expect(rows.every((r) => r.auth_mode === 'rfc9421')).toBe(true);
    });

    test('legacy mode only from authentication; unknown schemes refused', async () => {
      const db = get().deployment.get(Database);
      const notifier = get().deployment.get(TaskNotifier);
      await db.transaction((tx) =>
        notifier.statusChanged(
          tx,
          change({
            taskId: 'task-h',
            a2aPushConfig: null,
            pushNotificationConfig: {
              url: 'https://b.example/h',
              operation_id: 'o',
              authentication: { schemes: ['HMAC-SHA256'], credentials: 'Zk3q9VYt1mXw8s2LpR7uJc4aN6bQe0Hd' },
            },
          }),
        ),
      );
      const [row] = await db.query<any>(sql`SELECT auth_mode FROM webhook_outbox WHERE task_id = 'task-h'`);
      expect(row.auth_mode).toBe('hmac');
      await expect(
        db.transaction((tx) =>
          notifier.statusChanged(
            tx,
            change({
              taskId: 'task-x',
              a2aPushConfig: null,
              pushNotificationConfig: { url: 'https://b.example/h', authentication: { schemes: ['Digest'], credentials: 'x' } },
            }),
          ),
        ),
      ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    });

    test('receiver: dedup per sender, per-sender cap -> 429, re-emission by notification_id, bad envelopes 400', async () => {
      const db = get().deployment.get(Database);
      const clock = new ManualClock(new Date('2026-05-01T00:00:00Z'));
      const receiver = createWebhookReceiver(
        {
          db,
          clock,
          verifier: async () => {
            throw new Error('not used');
          },
        },
        { namespace: 'adcp', perSenderCap: 3 },
      );
      const reg = { mode: 'bearer' as const, sender: 'cap-sender', token: TOKEN };
      const send = (payload: unknown, r = reg) =>
        receiver.receive(
          {
            method: 'POST',
            url: 'https://me.example/h',
            headers: new Headers({ 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }),
            body: new TextEncoder().encode(JSON.stringify(payload)),
          },
          r,
        );
      const env = (key: string, extra: Record<string, unknown> = {}) => ({ idempotency_key: key, task_id: 't', status: 'completed', ...extra });
      expect(await send(env('key-0000000001', { result: { notification_id: 'n1' } }))).toMatchObject({ status: 200, body: { status: 'accepted' } });
      expect(await send(env('key-0000000001'))).toMatchObject({ status: 200, body: { status: 'duplicate' }, duplicate: true });
      expect(await send(env('key-0000000001'), { ...reg, sender: 'other-sender' })).toMatchObject({ status: 200, body: { status: 'accepted' } });
      const re = await send(env('key-0000000002', { result: { notification_id: 'n1' } }));
      expect(re).toMatchObject({ status: 200, body: { reemission: true } });
      expect(re.event?.reemission).toBe(true);
      expect(await send(env('key-0000000003'))).toMatchObject({ status: 200 });
      expect(await send(env('key-0000000004'))).toMatchObject({ status: 429, headers: { 'retry-after': '60' } });
      expect(await send(env('key-0000000001'))).toMatchObject({ status: 200, duplicate: true }); // duplicates still 2xx at the cap
      clock.advance(26 * 3600 * 1000); // past retention: room again
      expect(await send(env('key-0000000004'))).toMatchObject({ status: 200, body: { status: 'accepted' } });
      expect(await send({ idempotency_key: 'key-0000000005', task_id: 't', status: 'active' })).toMatchObject({
        status: 400,
        body: { error: 'invalid_envelope_status' },
      });
      expect(await send({ task_id: 't', status: 'completed' })).toMatchObject({ status: 400, body: { error: 'missing_idempotency_key' } });
      expect(await send({ notification_type: 'scheduled' })).toMatchObject({ status: 400, body: { error: 'invalid_envelope' } });
      expect(await send(env('key-0000000006'), { ...reg, token: 'another-token-abcdefgh' })).toMatchObject({
        status: 401,
        body: { error: 'webhook_bearer_invalid' },
      });
    });
  },
);
