import type { PluginContext } from '../../core/plugin.ts';
import type { InvokeDeps } from '../../core/task-invoke.ts';
import { Tasks } from '../../core/task.ts';
import { Auth } from '../../core/ports/auth.ts';
import { Idempotency } from '../../core/ports/idempotency.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';

/** The collaborators of the task pipeline, as a host plugin sees them at start. */
export function taskDeps(ctx: PluginContext<unknown>): InvokeDeps {
  return {
    registry: ctx.get(Tasks),
    auth: ctx.tryGet(Auth),
    idempotency: ctx.tryGet(Idempotency),
    store: ctx.tryGet(TaskStore),
    clock: ctx.get(Clock),
    ids: ctx.get(Ids),
    logger: ctx.logger,
  };
}

/** Join a mount prefix and a path without doubling slashes (`/signals` + `/mcp`). */
export function joinPath(prefix: string, path: string): string {
  const p = prefix.replace(/\/+$/, '');
  return `${p}${path.startsWith('/') ? path : `/${path}`}` || '/';
}

/** Public base URL of the deployment for a request (configured, else from the request). */
export function baseUrl(publicUrl: string | undefined, request: Request): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const url = new URL(request.url);
  return `${url.protocol}//${url.host}`;
}
