import { definePlugin } from '../../core/plugin.ts';
import { Tasks } from '../../core/task.ts';
import { TaskGateway } from '../../core/ports/task-gateway.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import auth from '../../plugins/auth/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { taskGatewayContract } from './task-gateway.contract.ts';

const TOKENS = ['gateway-contract-token-a-0123', 'gateway-contract-token-b-0123'] as const;

// plugins/tasks' gateway on each adapter, with the contract's tasks added by a feature plugin.
forEachAdapter('task gateway contract', (adapter) =>
  taskGatewayContract(`tasks [${adapter}]`, async (fixture) => {
    const feature = definePlugin({
      name: 'gateway-contract-tasks',
      deps: { tasks: Tasks },
      init({ tasks: registry }) {
        registry.add(...fixture.tasks);
      },
    });
    const d = await deploy(adapter, [
      auth({ testTokens: TOKENS.map((token) => ({ token })) }),
      idempotency({ inFlightWaitMs: 0, purgeIntervalSeconds: 0 }),
      tasks({ worker: false }),
      feature(),
    ]);
    return {
      port: d.deployment.get(TaskGateway),
      tokens: TOKENS,
      runDue: () => d.deployment.get(TaskStore).runDue(),
      close: () => d.close(),
    };
  }),
);
