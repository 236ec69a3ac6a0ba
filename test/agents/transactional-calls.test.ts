import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { sql, type SqlFragment } from '../../core/sql.ts';
import { definePlugin } from '../../core/plugin.ts';
import { Database, type DatabasePort, type Queryable } from '../../core/ports/database.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import { Idempotency } from '../../core/ports/idempotency.ts';
import { payloadHash } from '../../lib/canonical-json.ts';
import { defineTask, Tasks, type Deferral } from '../../core/task.ts';
import { activateSignalInput } from '../../plugins/signals/inputs.ts';
import signerHmacLegacy from '../../plugins/signer-hmac-legacy/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from './fixture.ts';

// Mutating calls of `transactional` tasks (activate_signal): handler writes, task record, outbox
// rows and the idempotency record commit in one transaction, or none of them does.

const ACTIVATE = { signal_agent_segment_id: 'sig_auto_intenders_suv', deployments: [{ type: 'platform', platform: 'the-trade-desk' }] };

/** One statement as the database saw it: autocommit, or inside transaction `tx` (numbered). */
interface Seen {
  tx: number | null;
  text: string;
  /** Round trip it travelled in: a statement issued while another of its session is unanswered shares that one's trip. */
  trip: number;
}

/** A Database port that records every statement, its transaction and its round trip (pipelined statements share one). */
function counting(inner: DatabasePort) {
  const seen: Seen[] = [];
  let transactions = 0;
  let trips = 0;
  const session = (q: Queryable, tx: number | null): Queryable => {
    let pending = 0;
    let trip = 0;
    return {
      async query<T>(statement: SqlFragment) {
        if (pending++ === 0) trip = ++trips;
        seen.push({ tx, text: statement.build().text.replace(/\s+/g, ' ').trim(), trip });
        try {
          return await q.query<T>(statement);
        } finally {
          pending--;
        }
      },
    };
  };
  const db: DatabasePort = {
    ...inner,
    kind: inner.kind,
    local: inner.local,
    query: (statement) => session(inner, null).query(statement),
    transaction: (fn) => inner.transaction((tx) => fn(session(tx, ++transactions))),
    migrate: (owner, migrations) => inner.migrate(owner, migrations),
    listen: (channel, handler, onReconnect) => inner.listen(channel, handler, onReconnect),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return { db, seen, reset: () => void seen.splice(0) };
}

/** activate_signal, plus an outbox row, then a crash once everything is written (while `crash.next`). */
const crash = { next: false, inside: null as null | Counts };
const crashingProbe = definePlugin({
  name: 'test-crashing-activation',
  deps: { tasks: Tasks, outbox: WebhookOutbox },
  init({ tasks, outbox }) {
    tasks.add(
      defineTask({
        name: 'activate_then_crash',
        description: 'activate_signal, an outbox row, then (when told) a crash after every write',
        protocol: 'signals',
        mutating: true,
        transactional: true,
        input: activateSignalInput,
        async handler(ctx) {
          const real = (await tasks.get('activate_signal')!.handler(ctx)) as Deferral;
          return {
            ...real,
            within: async (tx: Queryable) => {
              await real.within!(tx);
              await outbox.enqueue(tx, {
                url: 'https://receiver.test.example/hook',
                auth: { mode: 'hmac', secret: 'a-long-enough-shared-secret-for-hmac-0123456789' },
                format: 'mcp',
                idempotencyKey: ctx.ids.uuid4(),
                body: '{}',
              });
              if (!crash.next) return;
              crash.next = false;
              crash.inside = await counts(tx);
              throw new Error('crashed after every write');
            },
          };
        },
        resume: (ctx) => tasks.get('activate_signal')!.resume!(ctx),
      }),
    );
  },
});

/** A transactional task with a `prepare` step (the remote lookup sync_creatives makes before its transaction). */
const preparing = { fails: false, runs: 0 };
const preparedProbe = definePlugin({
  name: 'test-prepared-task',
  deps: { tasks: Tasks },
  init({ tasks }) {
    tasks.add(
      defineTask({
        name: 'prepared_echo',
        description: 'echoes what its prepare step looked up, from inside its transaction',
        protocol: 'signals',
        mutating: true,
        transactional: true,
        input: v.object({ note: v.string() }),
        async prepare({ input }) {
          preparing.runs++;
          if (preparing.fails) throw new ProtocolError('SERVICE_UNAVAILABLE', 'the lookup failed', { recovery: 'transient' });
          return { looked_up: input.note.toUpperCase() };
        },
        async handler({ prepared, tx }) {
          await tx!.query(sql`SELECT 1`);
          return { ...(prepared as { looked_up: string }) };
        },
      }),
    );
  },
});

async function counts(q: Queryable): Promise<Counts> {
  const [row] = await q.query<Counts>(sql`
    SELECT (SELECT count(*)::int FROM signal_activations) AS activations, (SELECT count(*)::int FROM tasks) AS tasks,
           (SELECT count(*)::int FROM task_status_history) AS history, (SELECT count(*)::int FROM idempotency_keys) AS keys,
           (SELECT count(*)::int FROM idempotency_keys WHERE state = 'completed') AS completed,
           (SELECT count(*)::int FROM webhook_outbox) AS outbox`);
  return row!;
}

const plus = (base: Counts, n: number) => Object.fromEntries(Object.entries(base).map(([k, v]) => [k, v + n])) as Counts;

type Counts = Record<'activations' | 'tasks' | 'history' | 'keys' | 'completed' | 'outbox', number>;

interface Subject {
  s: SignalsServer;
  counter: ReturnType<typeof counting>;
}

forEachDatabase<Subject>(
  'transactional mutating calls',
  async (adapter, schema) => {
    const counter = counting(await openDatabase(adapter, schema));
    // A duplicate of an in-flight request does not wait: only blocking on the key can make it replay.
    const s = await startSignalsServer(adapter, schema, {
      overrides: [[Database, counter.db]],
      idempotency: { inFlightWaitMs: 0 },
      extra: [signerHmacLegacy(), webhooks({ outbox: { workers: false } }), crashingProbe(), preparedProbe()],
    });
    return { s, counter };
  },
  async ({ s, counter }) => {
    await s.server.close();
    await counter.db.close();
  },
  (get) => {
    test('a crash after every write leaves no activation, task, history, idempotency or outbox row; the same key then succeeds', async () => {
      const { s, counter } = get();
      const client = restClient(s.server, TOKEN);
      const args = { ...ACTIVATE, deployments: [{ type: 'platform', platform: 'amazon-dsp' }], idempotency_key: 'tx-crash-then-retry-0001' };
      const before = await counts(counter.db);
      crash.next = true;
      const failed = await client.call('activate_then_crash', args);
      expect(failed.ok).toBe(false);
      // Inside the transaction every row existed (the crash came after the writes) ...
      expect(crash.inside).toEqual(plus(before, 1));
      // ... and none survived it.
      expect(await counts(counter.db)).toEqual(before);

      const retried = await client.call('activate_then_crash', args);
      expect(retried.body.status).toBe('submitted');
      expect(retried.body.replayed).toBeUndefined();
      expect(await counts(counter.db)).toEqual(plus(before, 1));
      const replay = await client.call('activate_then_crash', args);
      expect(replay.body).toMatchObject({ status: 'submitted', task_id: retried.body.task_id, replayed: true });
      expect(await counts(counter.db)).toEqual(plus(before, 1));
    });

    test('prepare runs before the transaction; its result reaches the handler; its failure still lets a completed key replay', async () => {
      const { s, counter } = get();
      const client = restClient(s.server, TOKEN);
      const args = { note: 'hello', idempotency_key: 'tx-prepared-echo-0001' };
      const before = await counts(counter.db);
      preparing.fails = true;
      const failed = await client.call('prepared_echo', args);
      expect(failed.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(await counts(counter.db)).toEqual(before);
      preparing.fails = false;
      counter.reset();
      const done = await client.call('prepared_echo', args);
      expect(done.body).toMatchObject({ status: 'completed', looked_up: 'HELLO' });
      expect(new Set(counter.seen.map((x) => x.tx))).toEqual(new Set([counter.seen[0]!.tx]));
      expect(counter.seen[0]!.tx).not.toBeNull();
      expect((await counts(counter.db)).completed).toBe(before.completed + 1);
      // A failing lookup does not hide the stored answer from a retry.
      preparing.fails = true;
      const runs = preparing.runs;
      const replay = await client.call('prepared_echo', args);
      preparing.fails = false;
      expect(preparing.runs).toBe(runs + 1);
      expect(replay.body).toMatchObject({ status: 'completed', looked_up: 'HELLO', replayed: true });
    });

    test('concurrent identical calls with one key: one activation, one task, every duplicate replays it', async () => {
      const { s, counter } = get();
      const client = restClient(s.server, TOKEN);
      const args = { ...ACTIVATE, deployments: [{ type: 'platform', platform: 'xandr' }], idempotency_key: 'tx-concurrent-dupes-0001' };
      const before = await counts(counter.db);
      const answers = await Promise.all(Array.from({ length: 6 }, () => client.call('activate_signal', args)));
      for (const a of answers) expect(a.body.status).toBe('submitted');
      const first = answers.filter((a) => a.body.replayed === undefined);
      expect(first).toHaveLength(1);
      for (const a of answers) expect(a.body.task_id).toBe(first[0]!.body.task_id);
      const after = await counts(counter.db);
      expect([after.activations, after.tasks, after.completed]).toEqual([before.activations + 1, before.tasks + 1, before.completed + 1]);
    });

    test('activate_signal: three writes inside one transaction, none autocommitted, in one round trip plus BEGIN/COMMIT', async () => {
      const { s, counter } = get();
      const client = restClient(s.server, TOKEN);
      counter.reset();
      const answer = await client.call('activate_signal', { ...ACTIVATE, idempotency_key: 'tx-counted-call-000001' });
      expect(answer.body.status).toBe('submitted');
      const seen = counter.seen.slice();
      expect(seen.filter((x) => x.tx === null)).toEqual([]);
      expect(new Set(seen.map((x) => x.tx)).size).toBe(1);
      // The catalog comes from memory (its version is checked by the activations' statement); the
      // task record carries its first history row; the idempotency key is written once, completed.
      // A local database (PGlite) also announces the caller's activation change (its copies are kept by notification).
      const notices = seen.filter((x) => x.text.startsWith('SELECT pg_notify'));
      expect(notices).toHaveLength(counter.db.local ? 1 : 0);
      const writes = seen.filter((x) => !notices.includes(x)).map((x) => (x.text.match(/(INSERT INTO|UPDATE|DELETE FROM) \w+/g) ?? []).join(' + '));
      expect(writes.sort()).toEqual(['INSERT INTO idempotency_keys', 'INSERT INTO signal_activations', 'INSERT INTO tasks + INSERT INTO task_status_history']);
      expect(new Set(seen.map((x) => x.trip)).size).toBe(1);
    });

    test('a key held by a committed claim (a non-transactional execution elsewhere) is IDEMPOTENCY_IN_FLIGHT, then replays its response', async () => {
      const { s, counter } = get();
      const client = restClient(s.server, TOKEN);
      await client.call('activate_signal', {
        ...ACTIVATE,
        deployments: [{ type: 'platform', platform: 'yahoo-dsp' }],
        idempotency_key: 'tx-principal-probe-0001',
      });
      const [who] = await counter.db.query<{ principal_id: string }>(sql`SELECT principal_id FROM idempotency_keys WHERE key = 'tx-principal-probe-0001'`);
      const args = { ...ACTIVATE, deployments: [{ type: 'platform', platform: 'stackadapt' }], idempotency_key: 'tx-held-elsewhere-0001' };
      const idempotency = s.server.deployment.get(Idempotency);
      const held = await idempotency.begin(who!.principal_id, args.idempotency_key, 'activate_signal', payloadHash(args));
      if (held.kind !== 'claimed') throw new Error('expected a claim');
      const before = await counts(counter.db);
      const busy = await client.call('activate_signal', args);
      expect(busy.body.code).toBe('IDEMPOTENCY_IN_FLIGHT');
      expect(await counts(counter.db)).toEqual(before);
      await idempotency.complete(held.claim, { status: 'submitted', task_id: 'held-elsewhere' });
      const replay = await client.call('activate_signal', args);
      expect(replay.body).toMatchObject({ status: 'submitted', task_id: 'held-elsewhere', replayed: true });
      expect(await counts(counter.db)).toEqual({ ...before, completed: before.completed + 1 });
    });
  },
);
