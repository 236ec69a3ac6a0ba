import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import type { ManualClock } from '../../core/ports/clock.ts';
import type { NewTask, TaskStorePort } from '../../core/ports/tasks.ts';

export interface TaskStoreSubject {
  port: TaskStorePort;
  clock: ManualClock;
  close(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = 'q8V2mZ7xK1pL4tR9wB3nC6yF0hJ5sD8g';
const FAR = new Date('2099-01-01T00:00:00Z');

/** A task nobody resumes during the suite (its first step is far in the future). */
const task = (over: Partial<NewTask> = {}): NewTask => ({
  taskType: 'activate_signal',
  protocol: 'signals',
  principalId: 'p1',
  status: 'submitted',
  state: { step: 1 },
  runAt: FAR,
  ...over,
});

async function code(work: Promise<unknown>): Promise<string> {
  const error = await work.then(
    () => null,
    (e) => e,
  );
  expect(error).not.toBeNull();
  return error.code;
}

/** The task store contract (core/ports/tasks.ts TaskStorePort): records, history, scoping, terminal states. */
export function taskStoreContract(name: string, make: () => Promise<TaskStoreSubject>): void {
  describe(`task store contract: ${name}`, () => {
    let s: TaskStoreSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
    });
    const store = () => s.port;

    test('create answers the record: a UUID id, its own context id by default, Clock times, not completed; history starts with it', async () => {
      const created = await store().create(task({ message: 'Queued', context: { trace: 'abc' } }));
      expect(created).toMatchObject({
        taskType: 'activate_signal',
        protocol: 'signals',
        principalId: 'p1',
        status: 'submitted',
        message: 'Queued',
        progress: null,
        result: null,
        context: { trace: 'abc' },
        contextId: created.id,
        pushNotificationConfig: null,
        a2aPushConfig: null,
        completedAt: null,
      });
      expect(created.id).toMatch(UUID);
      expect(created.createdAt).toEqual(s.clock.now());
      expect(created.updatedAt).toEqual(s.clock.now());
      expect(await store().get(created.id, 'p1')).toMatchObject({ ...created });
      expect(await store().history(created.id, 'p1')).toEqual([{ status: 'submitted', message: 'Queued', result: null, at: s.clock.now() }]);
    });

    test('a caller-chosen id and context id are kept', async () => {
      const id = crypto.randomUUID();
      const created = await store().create(task({ id, contextId: 'ctx-1', status: 'working' }));
      expect(created).toMatchObject({ id, contextId: 'ctx-1', status: 'working' });
    });

    test('`within` commits with the record: when it throws, no record exists', async () => {
      const id = crypto.randomUUID();
      const boom = new Error('within failed');
      await expect(
        store().create(
          task({
            id,
            within: async (tx) => {
              await tx.query(sql`SELECT 1`);
              throw boom;
            },
          }),
        ),
      ).rejects.toBe(boom);
      expect(await store().get(id, 'p1')).toBeNull();
    });

    test('reads are principal-scoped: another principal, an unknown id and a malformed id are all "not found"', async () => {
      const created = await store().create(task());
      expect(await store().get(created.id, 'p2')).toBeNull();
      expect(await store().history(created.id, 'p2')).toEqual([]);
      expect(await store().get(crypto.randomUUID(), 'p1')).toBeNull();
      expect(await store().get('not-a-uuid', 'p1')).toBeNull();
      expect(await store().history('not-a-uuid', 'p1')).toEqual([]);
    });

    test('records never hand out registration credentials', async () => {
      const created = await store().create(
        task({
          pushNotificationConfig: {
            url: 'https://buyer.example/hook',
            operation_id: 'op-1',
            authentication: { schemes: ['HMAC-SHA256'], credentials: SECRET },
          },
          a2aPushConfig: { url: 'https://buyer.example/a2a', token: 'tok-1', authentication: { schemes: ['Bearer'], credentials: 'bearer-token-0123456789' } },
        }),
      );
      for (const record of [created, await store().get(created.id, 'p1')]) {
        expect(record!.pushNotificationConfig as unknown).toEqual({
          url: 'https://buyer.example/hook',
          operation_id: 'op-1',
          authentication: { schemes: ['HMAC-SHA256'] },
        });
        expect(record!.a2aPushConfig as unknown).toEqual({ url: 'https://buyer.example/a2a', token: 'tok-1', authentication: { schemes: ['Bearer'] } });
        expect(JSON.stringify(record)).not.toContain(SECRET);
      }
    });

    test('each status change is recorded in order; repeating a status is not a change; a terminal status sets completedAt', async () => {
      const created = await store().create(task());
      s.clock.advance(1000);
      const working = await store().update(created.id, { status: 'working', message: 'Processing', progress: { percentage: 10 } });
      expect(working).toMatchObject({ status: 'working', message: 'Processing', progress: { percentage: 10 }, completedAt: null });
      expect(working.updatedAt).toEqual(s.clock.now());
      await store().update(created.id, { status: 'working' });
      s.clock.advance(1000);
      const done = await store().update(created.id, { status: 'completed', message: 'Completed', result: { ok: true } });
      expect(done).toMatchObject({ status: 'completed', result: { ok: true }, completedAt: s.clock.now() });
      const history = await store().history(created.id, 'p1');
      expect(history.map((h) => h.status)).toEqual(['submitted', 'working', 'completed']);
      expect(history[2]).toEqual({ status: 'completed', message: 'Completed', result: { ok: true }, at: s.clock.now() });
    });

    test('a terminal task refuses a status change (INVALID_STATE) and keeps its status; an unknown task is REFERENCE_NOT_FOUND', async () => {
      const created = await store().create(task());
      await store().update(created.id, { status: 'failed', message: 'boom', result: { errors: [{ code: 'X' }] } });
      for (const status of ['working', 'completed', 'canceled'] as const) {
        expect(await code(store().update(created.id, { status }))).toBe('INVALID_STATE');
      }
      expect((await store().get(created.id, 'p1'))!.status).toBe('failed');
      expect((await store().history(created.id, 'p1')).map((h) => h.status)).toEqual(['submitted', 'failed']);
      expect(await code(store().update(crypto.randomUUID(), { status: 'working' }))).toBe('REFERENCE_NOT_FOUND');
    });

    test('cancel: the owner cancels a running task once; a terminal task comes back unchanged; others get null', async () => {
      const created = await store().create(task({ status: 'working' }));
      expect(await store().cancel(created.id, 'p2')).toBeNull();
      expect((await store().get(created.id, 'p1'))!.status).toBe('working');
      s.clock.advance(1000);
      const canceled = await store().cancel(created.id, 'p1');
      expect(canceled).toMatchObject({ id: created.id, status: 'canceled', completedAt: s.clock.now() });
      s.clock.advance(1000);
      const again = await store().cancel(created.id, 'p1');
      expect(again).toMatchObject({ status: 'canceled', completedAt: canceled!.completedAt });
      expect((await store().history(created.id, 'p1')).map((h) => h.status)).toEqual(['working', 'canceled']);

      const completed = await store().create(task());
      await store().update(completed.id, { status: 'completed', result: { ok: true } });
      expect(await store().cancel(completed.id, 'p1')).toMatchObject({ status: 'completed', result: { ok: true } });
      expect(await store().cancel(crypto.randomUUID(), 'p1')).toBeNull();
    });
  });
}
