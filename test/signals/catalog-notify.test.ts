import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { TaskGateway } from '../../core/ports/task-gateway.ts';
import { importCatalog } from '../../plugins/signals/catalog.ts';
import { DATABASE_URL, dropSchema, openDatabase, skipPostgresUnlessConfigured } from '../support/db.ts';
import { SignalsCatalog } from '../../plugins/signals/memory-catalog.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import signals from '../../plugins/signals/index.ts';
import { startServer, type TestServer } from '../support/server.ts';

const TOKEN = 'perfcat-notify-token-0123456789';

interface Instance {
  server: TestServer;
  runDue(): Promise<number>;
}

/** One deployment (an instance) of the signals agent on the shared schema. */
async function instance(schema: string): Promise<Instance> {
  const server = await startServer('postgres', schema, [
    auth({ testTokens: [{ token: TOKEN }] }),
    tasks({ worker: false }),
    idempotency(),
    signals({ seed: false, activationDelaySeconds: 0, agentUrl: 'https://signals.test.example/mcp' }),
  ]);
  return { server, runDue: () => server.deployment.get(TaskStore).runDue() };
}

// Every instance answers get_signals from its own copy of the catalog. A catalog write in one
// deployment reaches the other through NOTIFY (its copy reloads), and the caller's activations are
// read fresh on every answer.

const signal = (id: string, name: string) => ({
  id,
  name,
  description: 'Signal for the cross-instance test.',
  signal_type: 'marketplace' as const,
  data_provider: 'Notify Data',
  data_provider_domain: 'notify.example',
  coverage_percentage: 40,
  pricing: { cpm: 2, currency: 'USD' },
  platforms: [{ platform: 'the-trade-desk', estimated_activation_duration_minutes: 0 }],
});

async function getSignals(s: Instance, spec: string) {
  const outcome = await s.server.deployment.get(TaskGateway).invoke({ name: 'get_signals', input: { signal_spec: spec }, authorization: `Bearer ${TOKEN}` });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.body));
  return (outcome.body as { signals: { signal_agent_segment_id: string; name: string; deployments: Record<string, unknown>[] }[] }).signals;
}

/** Polls until `check` holds or the deadline passes (a NOTIFY arrives asynchronously). */
async function eventually(check: () => Promise<boolean>, deadlineMs = 20_000): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await Bun.sleep(25);
  }
  return check();
}

skipPostgresUnlessConfigured('signal catalog across instances');
if (DATABASE_URL) {
  describe('signal catalog across instances [postgres]', () => {
    const schema = `perfcat_notify_${process.pid}`;
    let a: Instance;
    let b: Instance;
    beforeAll(async () => {
      a = await instance(schema);
      b = await instance(schema);
      await importCatalog(a.server.deployment.get(Database), { signals: [signal('notify_first', 'Zebra watchers')] });
    }, 60_000);
    afterAll(async () => {
      await a?.server.close();
      await b?.server.close();
      await dropSchema('postgres', schema);
    });

    test('a write in one instance makes the other reload its copy by itself (NOTIFY), before any get_signals', async () => {
      const db = await openDatabase('postgres', schema, 2);
      const other = new SignalsCatalog(db);
      const unfollow = await other.follow(b.server.deployment.logger);
      try {
        const before = (await other.snapshot.get()).version;
        await importCatalog(a.server.deployment.get(Database), { signals: [signal('notify_third', 'Tapir watchers')] });
        // Only the notification can move `peek` on: nothing here reads through `get` again.
        expect(await eventually(async () => other.snapshot.peek()?.version !== before)).toBe(true);
        expect(other.snapshot.peek()!.signals.find('id', 'notify_third')).toBeNumber();
      } finally {
        await unfollow();
        await db.close();
      }
    });

    test('a signal imported through one instance is found by the other', async () => {
      expect(await eventually(async () => (await getSignals(b, 'zebra')).length === 1)).toBe(true);
      await importCatalog(a.server.deployment.get(Database), { signals: [signal('notify_second', 'Okapi watchers')] });
      expect(await eventually(async () => (await getSignals(b, 'okapi')).map((x) => x.signal_agent_segment_id).join() === 'notify_second')).toBe(true);
    });

    test('answers are exact at once: the other instance ranks a renamed signal by its new name in the next call', async () => {
      // No polling: each answer checks the catalog version its copy was loaded at and reloads when behind.
      await importCatalog(a.server.deployment.get(Database), { signals: [signal('notify_first', 'Giraffe watchers')] });
      expect((await getSignals(b, 'giraffe')).map((x) => x.name)).toEqual(['Giraffe watchers']);
      expect(await getSignals(b, 'zebra')).toEqual([]);
    });

    test('an activation is visible in the very next get_signals, on either instance', async () => {
      for (const s of [a, b]) expect((await getSignals(s, 'okapi'))[0]?.deployments[0]).not.toHaveProperty('activation_key');
      const activate = await b.server.deployment.get(TaskGateway).invoke({
        name: 'activate_signal',
        input: {
          idempotency_key: crypto.randomUUID(),
          signal_agent_segment_id: 'notify_second',
          destinations: [{ type: 'platform', platform: 'the-trade-desk' }],
        },
        authorization: `Bearer ${TOKEN}`,
      });
      expect(activate).toMatchObject({ ok: true });
      for (const s of [b, a]) expect((await getSignals(s, 'okapi'))[0]?.deployments[0]).toHaveProperty('activation_key');
      await b.runDue();
      for (const s of [a, b]) expect((await getSignals(s, 'okapi'))[0]?.deployments[0]).toMatchObject({ is_live: true });
    });
  });
}
