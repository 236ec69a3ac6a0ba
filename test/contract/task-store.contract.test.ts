import { ManualClock } from '../../core/ports/clock.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import auth from '../../plugins/auth/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { taskStoreContract } from './task-store.contract.ts';

// plugins/tasks (with the auth and idempotency ports it requires) on each adapter.
forEachAdapter('task store contract', (adapter) =>
  taskStoreContract(`tasks [${adapter}]`, async () => {
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const d = await deploy(adapter, [auth(), idempotency({ purgeIntervalSeconds: 0 }), tasks({ worker: false })], {
      clock,
      env: { SECRETS_KEY: 'contract-secrets-key-0123456789abcdef' },
    });
    return { port: d.deployment.get(TaskStore), clock, close: () => d.close() };
  }),
);
