import { definePreset } from '../core/config.ts';
import { storageFor } from './storage.ts';
import auth from '../plugins/auth/index.ts';
import tasks from '../plugins/tasks/index.ts';
import idempotency from '../plugins/idempotency/index.ts';
import signals from '../plugins/signals/index.ts';
import restHost from '../hosts/rest/index.ts';
import restTasks from '../hosts/rest/tasks.ts';
import mcpHost from '../hosts/mcp/index.ts';
import a2aHost from '../hosts/a2a/index.ts';

/**
 * A vendor hosting only the signals agent: MCP at /mcp, A2A at /a2a (card at
 * /.well-known/agent-card.json), REST at /tasks/{name}. Callers use organization API keys.
 */
export default definePreset({
  name: 'signals-agent',
  plugins: [
    storageFor,
    auth(),
    tasks(),
    idempotency(),
    signals(),
    restHost({ title: 'Signals Agent' }),
    restTasks(),
    mcpHost(),
    a2aHost(),
  ],
});
