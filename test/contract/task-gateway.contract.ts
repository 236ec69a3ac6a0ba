import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json, type TaskDefinition } from '../../core/task.ts';
import type { TaskCall, TaskGatewayPort, TaskOutcome } from '../../core/ports/task-gateway.ts';

/** Tasks the contract serves through the gateway, and what their handlers saw. */
export interface GatewayFixture {
  tasks: TaskDefinition<any, any>[];
  /** How many times the mutating task's handler ran. */
  mutations: number;
}

export interface TaskGatewaySubject {
  port: TaskGatewayPort;
  /** `Bearer` credentials of two different principals. */
  tokens: readonly [string, string];
  /** Run the deferred steps that are due (the tasks worker, driven by the test). */
  runDue(): Promise<number>;
  close(): Promise<void>;
}

/** The fixture: an echo (group `alpha`), a mutating task, a deferred task (group `beta`) and a task that crashes. */
export function gatewayFixture(): GatewayFixture {
  const fixture: GatewayFixture = { tasks: [], mutations: 0 };
  fixture.tasks.push(
    defineTask({
      name: 'echo_words',
      description: 'Echo the words',
      protocol: 'alpha',
      input: v.object({ words: v.pipe(v.array(v.string()), v.minLength(1, 'must hold at least one word')) }),
      handler: ({ input, principal }) => ({ words: input.words, principal: principal.id }),
    }),
    defineTask({
      name: 'create_thing',
      description: 'Create a thing (mutating)',
      protocol: 'alpha',
      mutating: true,
      input: v.object({ name: v.string(), fail: v.optional(v.boolean()) }),
      handler: ({ input }) => {
        fixture.mutations++;
        if (input.fail) throw new ProtocolError('INVALID_STATE', 'refused on purpose');
        return { thing: input.name, n: fixture.mutations };
      },
    }),
    defineTask({
      name: 'slow_report',
      description: 'A report produced asynchronously',
      protocol: 'beta',
      input: v.object({ topic: v.string() }),
      handler: ({ input, task }) => task.defer({ status: 'submitted', message: 'Queued', partial: { topic: input.topic }, state: { topic: input.topic } }),
      resume: ({ state }) => ({ report: `about ${state.topic}` }),
    }),
    defineTask({
      name: 'crash',
      description: 'A handler with a bug',
      protocol: 'alpha',
      input: v.object({}),
      handler: () => {
        throw new TypeError('undefined is not a function');
      },
    }),
  );
  return fixture;
}

let n = 0;
const key = () => `gateway-contract-${process.pid}-${Date.now()}-${n++}`;

/** The task gateway contract (core/ports/task-gateway.ts): the one pipeline every host calls. */
export function taskGatewayContract(name: string, make: (fixture: GatewayFixture) => Promise<TaskGatewaySubject>): void {
  describe(`task gateway contract: ${name}`, () => {
    let s: TaskGatewaySubject;
    const fixture = gatewayFixture();
    beforeAll(async () => {
      s = await make(fixture);
    });
    afterAll(async () => {
      await s?.close();
    });
    const bearer = (i: 0 | 1 = 0) => `Bearer ${s.tokens[i]}`;
    const invoke = (call: Partial<TaskCall> & { name: string }): Promise<TaskOutcome> => s.port.invoke({ input: {}, authorization: bearer(), ...call });
    const failure = (outcome: TaskOutcome) => {
      expect(outcome.ok).toBe(false);
      if (outcome.ok) throw new Error('expected a failure');
      return outcome;
    };
    const success = (outcome: TaskOutcome) => {
      if (!outcome.ok) throw new Error(`expected success, got ${outcome.error.code}: ${outcome.error.message}`);
      return outcome;
    };

    test('describe lists the tasks with their group, mutability and argument schema; a mount gets its groups plus `protocol`', () => {
      const all = s.port.describe();
      const echo = all.find((t) => t.name === 'echo_words')!;
      expect(echo).toMatchObject({ name: 'echo_words', description: 'Echo the words', protocol: 'alpha', mutating: false });
      expect(echo.inputSchema).toMatchObject({ type: 'object' });
      expect(JSON.stringify(echo.inputSchema)).toContain('words');
      expect(all.find((t) => t.name === 'create_thing')!.mutating).toBe(true);
      const beta = s.port.describe(['beta']).map((t) => t.name);
      expect(beta).toContain('slow_report');
      expect(beta).not.toContain('echo_words');
      expect(beta).toContain(`get_${s.port.namespace}_capabilities`);
      expect(s.port.describe(['beta']).every((t) => t.protocol === 'beta' || t.protocol === 'protocol')).toBe(true);
    });

    test('a synchronous task answers completed, with the request context echoed', async () => {
      const out = success(await invoke({ name: 'echo_words', input: { words: ['a', 'b'], context: { trace: 't-1' } } }));
      expect(out.status).toBe('completed');
      expect(out.body).toMatchObject({ status: 'completed', words: ['a', 'b'], context: { trace: 't-1' } });
      expect(out.task.name).toBe('echo_words');
    });

    test('never throws for a caller mistake: unknown task, task of another mount, bad arguments; the body names the field', async () => {
      const unknown = failure(await invoke({ name: 'no_such_task' }));
      expect(unknown.error.code).toBe('INVALID_REQUEST');
      expect(unknown.body).toMatchObject({ status: 'failed', code: 'INVALID_REQUEST' });
      expect(failure(await invoke({ name: 'echo_words', input: { words: ['a'] }, protocols: ['beta'] })).error.code).toBe('INVALID_REQUEST');
      const bad = failure(await invoke({ name: 'echo_words', input: { words: [], context: { trace: 't-2' } } }));
      expect(bad.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'words' });
      expect(bad.body).toMatchObject({ status: 'failed', code: 'INVALID_REQUEST', field: 'words', context: { trace: 't-2' } });
      expect(bad.body[`${s.port.namespace}_error`]).toMatchObject({ code: 'INVALID_REQUEST', field: 'words' });
      expect(failure(await invoke({ name: 'echo_words', input: ['not', 'an', 'object'] })).error.code).toBe('INVALID_REQUEST');
      expect(failure(await invoke({ name: 'echo_words', input: { words: ['a'], context: 'not-an-object' } })).error).toMatchObject({
        code: 'INVALID_REQUEST',
        field: 'context',
      });
    });

    test('authentication: missing or unknown credentials are AUTH_REQUIRED', async () => {
      expect(failure(await invoke({ name: 'echo_words', input: { words: ['a'] }, authorization: null })).error.code).toBe('AUTH_REQUIRED');
      expect(failure(await invoke({ name: 'echo_words', input: { words: ['a'] }, authorization: 'Bearer unknown-token-0123456789' })).error.code).toBe(
        'AUTH_REQUIRED',
      );
      expect(failure(await invoke({ name: 'echo_words', input: { words: ['a'] }, authorization: 'Basic abc' })).error.code).toBe('AUTH_REQUIRED');
    });

    test('a crashing handler is a failure body, not an exception, and says nothing of the crash', async () => {
      const out = failure(await invoke({ name: 'crash' }));
      expect(out.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(JSON.stringify(out.body)).not.toContain('undefined is not a function');
    });

    test('mutating tasks: idempotency_key required; one execution per key; a retry replays; another payload conflicts', async () => {
      expect(failure(await invoke({ name: 'create_thing', input: { name: 'x' } })).error).toMatchObject({ code: 'INVALID_REQUEST', field: 'idempotency_key' });
      const k = key();
      const before = fixture.mutations;
      const first = success(await invoke({ name: 'create_thing', input: { name: 'x', idempotency_key: k } }));
      const retry = success(await invoke({ name: 'create_thing', input: { name: 'x', idempotency_key: k } }));
      expect(fixture.mutations).toBe(before + 1);
      expect(retry.body).toEqual({ ...first.body, replayed: true });
      expect(failure(await invoke({ name: 'create_thing', input: { name: 'y', idempotency_key: k } })).error.code).toBe('IDEMPOTENCY_CONFLICT');
      // Keys are the caller's: another principal's identical key executes for that principal.
      success(await invoke({ name: 'create_thing', input: { name: 'x', idempotency_key: k }, authorization: bearer(1) }));
      expect(fixture.mutations).toBe(before + 2);
    });

    test('a failed mutating call is not stored: a retry with the same key executes again', async () => {
      const k = key();
      const before = fixture.mutations;
      expect(failure(await invoke({ name: 'create_thing', input: { name: 'x', fail: true, idempotency_key: k } })).error.code).toBe('INVALID_STATE');
      expect(failure(await invoke({ name: 'create_thing', input: { name: 'x', fail: true, idempotency_key: k } })).error.code).toBe('INVALID_STATE');
      expect(fixture.mutations).toBe(before + 2);
    });

    test('a deferred call answers submitted with a task id; the caller (only) reads and follows it to completion', async () => {
      const out = success(await invoke({ name: 'slow_report', input: { topic: 'tides', context: { trace: 't-3' } } }));
      expect(out.status).toBe('submitted');
      expect(out.body).toMatchObject({ status: 'submitted', task_id: out.taskId, topic: 'tides', context: { trace: 't-3' } });
      const id = out.taskId!;
      expect(await s.port.getTask(id, bearer())).toMatchObject({ id, status: 'submitted', taskType: 'slow_report', protocol: 'beta' });
      expect(await s.port.getTask(id, bearer(1))).toBeNull();
      await expect(s.port.getTask(id, null)).rejects.toMatchObject({ code: 'AUTH_REQUIRED' });
      expect(await s.runDue()).toBeGreaterThanOrEqual(1);
      expect(await s.port.getTask(id, bearer())).toMatchObject({ id, status: 'completed', result: { report: 'about tides' } });
    });

    test('cancelTask: the owner cancels a running task; another principal gets null; no credential is AUTH_REQUIRED', async () => {
      const id = success(await invoke({ name: 'slow_report', input: { topic: 'cancel me' } })).taskId!;
      expect(await s.port.cancelTask(id, bearer(1))).toBeNull();
      await expect(s.port.cancelTask(id, null)).rejects.toMatchObject({ code: 'AUTH_REQUIRED' });
      expect(await s.port.cancelTask(id, bearer())).toMatchObject({ id, status: 'canceled' });
      expect(await s.port.getTask(id, bearer())).toMatchObject({ status: 'canceled' });
      expect(await s.port.cancelTask(crypto.randomUUID(), bearer())).toBeNull();
    });

    test('errorBody: the failure body of an error met before invoking, with the context echoed', () => {
      const body: Json = s.port.errorBody(new ProtocolError('INVALID_REQUEST', 'body is not JSON', { field: 'body' }), { trace: 't-4' });
      expect(body).toMatchObject({ status: 'failed', code: 'INVALID_REQUEST', message: 'body is not JSON', field: 'body', context: { trace: 't-4' } });
      expect(body[`${s.port.namespace}_error`]).toMatchObject({ code: 'INVALID_REQUEST', message: 'body is not JSON' });
    });
  });
}
