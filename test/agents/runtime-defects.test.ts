import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { definePlugin } from '../../core/plugin.ts';
import { defineTask, Tasks } from '../../core/task.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { Idempotency, type IdempotencyPort } from '../../core/ports/idempotency.ts';
import { TaskNotifier, type TaskNotifierPort, type TaskStatusChange } from '../../core/ports/task-notifier.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import { DbIdempotency } from '../../plugins/idempotency/store.ts';
import signerHmacLegacy from '../../plugins/signer-hmac-legacy/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from './fixture.ts';

const TTD = { type: 'platform', platform: 'the-trade-desk' };
const ACTIVATE = { signal_agent_segment_id: 'sig_auto_intenders_suv', deployments: [TTD] };
const count = async (db: Queryable, table: string) => (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)}`))[0]!.n;

// ---- A push registration that delivery would refuse is refused at request time; one bad task never stalls others.

forEachDatabase<{ s: SignalsServer; clock: ManualClock }>(
  'poisoned push registrations',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2026-05-01T00:00:00Z'));
    // The real notifier (webhooks plugin, no delivery worker) so registrations are checked as delivery would.
    const s = await startSignalsServer(adapter, schema, { overrides: [[Clock, clock]], extra: [signerHmacLegacy(), webhooks({ outbox: { workers: false } })] });
    return { s, clock };
  },
  async ({ s }) => s.server.close(),
  (get) => {
    test('registrations refused now: a 32-identical-character HMAC secret, an A2A Basic scheme, an A2A Bearer without credentials', async () => {
      const { s } = get();
      const db = s.server.deployment.get(Database);
      const before = await count(db, 'tasks');
      const weak = await restClient(s.server, TOKEN).call('activate_signal', {
        ...ACTIVATE,
        idempotency_key: 'poison-weak-secret-0001',
        push_notification_config: {
          url: 'https://buyer.example/hook',
          operation_id: 'op-1',
          authentication: { schemes: ['HMAC-SHA256'], credentials: 'a'.repeat(32) },
        },
      });
      expect(weak.ok).toBe(false);
      expect(weak.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'push_notification_config.authentication.credentials' });

      // A2A push registrations ride in message/send's configuration (raw JSON-RPC 0.3 here).
      for (const [authentication, field] of [
        [{ scheme: 'Basic', credentials: 'dXNlcjpwYXNzd29yZC1sb25nLWVub3VnaA==' }, 'configuration.pushNotificationConfig.authentication.schemes[0]'],
        [{ scheme: 'Bearer', credentials: '' }, 'configuration.pushNotificationConfig.authentication.credentials'],
      ] as const) {
        const res = await s.server.fetch('/a2a', {
          method: 'POST',
          token: TOKEN,
          json: {
            jsonrpc: '2.0',
            id: 1,
            method: 'message/send',
            params: {
              message: {
                kind: 'message',
                messageId: crypto.randomUUID(),
                role: 'user',
                parts: [
                  { kind: 'data', data: { skill: 'activate_signal', input: { ...ACTIVATE, idempotency_key: `poison-a2a-${authentication.scheme}-0001` } } },
                ],
              },
              configuration: {
                pushNotificationConfig: {
                  url: 'https://buyer.example/a2a-hook',
                  authentication: { schemes: [authentication.scheme], credentials: authentication.credentials },
                },
              },
            },
          },
        });
        const task = (
          (await res.json()) as {
            result: {
              status: { state: string; message?: { parts: Array<{ kind: string; data?: Record<string, unknown> }> } };
              artifacts?: Array<{ parts: Array<{ kind: string; data?: Record<string, unknown> }> }>;
            };
          }
        ).result;
        expect(task.status.state).toBe('failed');
        const data = task.artifacts?.[0]?.parts.find((p) => p.kind === 'data')?.data;
        expect(data).toMatchObject({ code: 'INVALID_REQUEST', field });
      }
      expect(await count(db, 'tasks')).toBe(before);
    });

    test('a poisoned task stored by an older release fails after its attempts without stopping the others', async () => {
      const { s, clock } = get();
      const store = s.server.deployment.get(TaskStore);
      // Written straight to the store, as a registration validated by an older release would be.
      const poisoned = await store.create({
        taskType: 'activate_signal',
        protocol: 'signals',
        principalId: 'test:someone',
        status: 'submitted',
        state: {},
        pushNotificationConfig: {
          url: 'https://buyer.example/hook',
          operation_id: 'op-poison',
          authentication: { schemes: ['HMAC-SHA256'], credentials: 'a'.repeat(32) },
        },
      });
      const client = restClient(s.server, TOKEN);
      const good = await client.call('activate_signal', {
        ...ACTIVATE,
        deployments: [{ type: 'platform', platform: 'xandr' }],
        idempotency_key: 'poison-good-neighbour-01',
      });
      expect(good.body.status).toBe('submitted');

      // The batch holds both; the good one completes although the poisoned one cannot record anything.
      expect(await s.runDue()).toBe(2);
      expect((await client.poll(good.body.task_id)).status).toBe('completed');
      // Re-claimed only after its lease, and failed for good (without a webhook) after the last attempt.
      for (let attempt = 2; attempt <= 5; attempt++) {
        clock.advance(61_000);
        expect(await s.runDue()).toBe(1);
      }
      const final = await store.get(poisoned.id, 'test:someone');
      expect(final?.status).toBe('failed');
      clock.advance(61_000);
      expect(await s.runDue()).toBe(0);
    });

    test('end to end over A2A: an unknown scheme ["Weird"] is refused at request time; with a poisoned task stored, another A2A task still completes', async () => {
      const { s } = get();
      const db = s.server.deployment.get(Database);
      const rpc = async (method: string, params: Record<string, unknown>) => {
        const res = await s.server.fetch('/a2a', { method: 'POST', token: TOKEN, json: { jsonrpc: '2.0', id: 1, method, params } });
        return (
          (await res.json()) as {
            result: { id: string; status: { state: string }; artifacts?: Array<{ parts: Array<{ kind: string; data?: Record<string, unknown> }> }> };
          }
        ).result;
      };
      const send = (input: Record<string, unknown>, configuration?: Record<string, unknown>) =>
        rpc('message/send', {
          message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: { skill: 'activate_signal', input } }] },
          ...(configuration ? { configuration } : {}),
        });
      const before = await count(db, 'tasks');
      const weird = await send(
        { ...ACTIVATE, idempotency_key: 'poison-a2a-weird-000001' },
        { pushNotificationConfig: { url: 'https://buyer.example/a2a-hook', authentication: { schemes: ['Weird'], credentials: 'x'.repeat(40) } } },
      );
      expect(weird.status.state).toBe('failed');
      expect(weird.artifacts?.[0]?.parts.find((p) => p.kind === 'data')?.data).toMatchObject({
        code: 'INVALID_REQUEST',
        field: 'configuration.pushNotificationConfig.authentication.schemes[0]',
      });
      expect(await count(db, 'tasks')).toBe(before);

      // A registration an older release accepted, stored as it was then.
      await s.server.deployment.get(TaskStore).create({
        taskType: 'activate_signal',
        protocol: 'signals',
        principalId: 'test:someone-else',
        status: 'submitted',
        state: {},
        a2aPushConfig: { url: 'https://buyer.example/a2a-hook', authentication: { schemes: ['Weird'] as never, credentials: 'x'.repeat(40) } },
      });
      const good = await send({ ...ACTIVATE, deployments: [{ type: 'platform', platform: 'yahoo-dsp' }], idempotency_key: 'poison-a2a-good-0000001' });
      expect(good.status.state).toBe('submitted');
      expect(await s.runDue()).toBe(2);
      expect((await rpc('tasks/get', { id: good.id })).status.state).toBe('completed');
    });
  },
);

// ---- The replay response commits with the deferred task's record: a crash between them cannot make a retry execute again.

forEachDatabase<{ s: SignalsServer; crash: { next: boolean } }>(
  'idempotency completion inside the task transaction',
  async (adapter, schema) => {
    const crash = { next: false };
    let inner: IdempotencyPort | null = null;
    // Stands in for the process dying right after storing the task: storing the response fails once
    // (complete() after a claim, record() in a transactional call).
    const crashed = () => {
      if (!crash.next) return false;
      crash.next = false;
      return true;
    };
    const crashing: IdempotencyPort = {
      get replayTtlSeconds() {
        return inner!.replayTtlSeconds;
      },
      begin: (...args) => inner!.begin(...args),
      lookup: (...args) => inner!.lookup(...args),
      release: (claim) => inner!.release(claim),
      async record(...args) {
        if (crashed()) throw new Error('crashed before the replay response was stored');
        return inner!.record(...args);
      },
      async complete(claim, response, tx) {
        if (crashed()) throw new Error('crashed before the replay response was stored');
        return inner!.complete(claim, response, tx);
      },
    };
    const s = await startSignalsServer(adapter, schema, { overrides: [[Idempotency, crashing]] });
    const d = s.server.deployment;
    inner = new DbIdempotency(d.get(Database), d.get(Clock), d.get(Ids), {
      replayTtlSeconds: 86_400,
      inFlightWaitMs: 1000,
      inFlightLeaseSeconds: 60,
      pollMs: 10,
    });
    return { s, crash };
  },
  async ({ s }) => s.server.close(),
  (get) => {
    test('a failed completion leaves no task and no activation; the retry executes and then replays', async () => {
      const { s, crash } = get();
      const db = s.server.deployment.get(Database);
      const client = restClient(s.server, TOKEN);
      const args = { ...ACTIVATE, idempotency_key: 'crash-between-writes-01' };
      const [tasks, activations] = [await count(db, 'tasks'), await count(db, 'signal_activations')];
      crash.next = true;
      const first = await client.call('activate_signal', args);
      expect(first.ok).toBe(false);
      expect([await count(db, 'tasks'), await count(db, 'signal_activations')]).toEqual([tasks, activations]);
      const retry = await client.call('activate_signal', args);
      expect(retry.body.status).toBe('submitted');
      const replay = await client.call('activate_signal', args);
      expect(replay.body).toMatchObject({ status: 'submitted', task_id: retry.body.task_id, replayed: true });
    });
  },
);

// ---- A reschedule that repeats the status is not a status change: no duplicate `working` webhook.

class RecordingNotifier implements TaskNotifierPort {
  readonly changes: TaskStatusChange[] = [];
  async statusChanged(_tx: Queryable, change: TaskStatusChange): Promise<void> {
    this.changes.push(change);
  }
  checkRegistration(): void {}
}

const steppedTask = definePlugin({
  name: 'test-stepped-task',
  deps: { tasks: Tasks },
  init({ tasks }) {
    tasks.add(
      defineTask({
        name: 'stepped_job',
        description: 'Three resume steps',
        protocol: 'signals',
        input: v.object({}),
        handler: ({ task }) => task.defer({ status: 'submitted', state: { step: 0 } }),
        resume({ state, clock, reschedule }) {
          const step = (state.step as number) + 1;
          if (step === 1) return reschedule({ state: { step }, runAt: clock.now(), status: 'working' });
          if (step === 2) return reschedule({ state: { step }, runAt: clock.now(), status: 'working', progress: { percentage: 50 } });
          return { done: true };
        },
      }),
    );
  },
});

forEachDatabase<{ s: SignalsServer; notifier: RecordingNotifier }>(
  'status events',
  async (adapter, schema) => {
    const notifier = new RecordingNotifier();
    return { s: await startSignalsServer(adapter, schema, { overrides: [[TaskNotifier, notifier]], extra: [steppedTask()] }), notifier };
  },
  async ({ s }) => s.server.close(),
  (get) => {
    test('working is announced once; a progress update is an event; a repeated status without news is not', async () => {
      const { s, notifier } = get();
      const { body } = await restClient(s.server, TOKEN).call('stepped_job', {});
      for (let i = 0; i < 3; i++) await s.runDue();
      const events = notifier.changes
        .filter((c) => c.taskId === body.task_id)
        .map((c) => [c.status, (c.result as { percentage?: number } | null)?.percentage ?? null]);
      expect(events).toEqual([
        ['submitted', null],
        ['working', null],
        ['working', 50],
        ['completed', null],
      ]);
    });
  },
);
