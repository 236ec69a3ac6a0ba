import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { Tasks, type Json } from '../../core/task.ts';
import { invokeTask, errorBody, type InvokeOutcome } from '../../core/task-invoke.ts';
import { ProtocolError } from '../../core/errors.ts';
import { bearerToken } from '../../core/ports/auth.ts';
import { joinPath, taskDeps } from '../tasks/deps.ts';
import { readJsonBody } from './request.ts';

const options = v.object({
  /** Path prefix (`/signals` serves `/signals/tasks/{name}`). */
  prefix: v.optional(v.pipe(v.string(), v.regex(/^(\/[A-Za-z0-9_-]+)*$/, 'must be empty or an absolute path without trailing slash')), ''),
  protocols: v.optional(v.array(v.string())),
});

function reply(outcome: InvokeOutcome): Response {
  if (outcome.ok) {
    // 202 for an accepted asynchronous call (poll GET /tasks/{id}); 200 for a final body.
    const status = outcome.status === 'submitted' || outcome.status === 'working' ? 202 : 200;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (outcome.taskId && status === 202) headers.location = `tasks/${outcome.taskId}`;
    return new Response(JSON.stringify(outcome.body), { status, headers });
  }
  const e = outcome.error;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (e.retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(e.retryAfter)));
  if (e.status === 401) headers['www-authenticate'] = 'Bearer';
  // REST error body `{error, message}` plus the task failure members (code, errors, {ns}_error).
  return new Response(JSON.stringify({ error: e.code.toLowerCase(), ...outcome.body }), { status: e.status, headers });
}

/**
 * Tasks over plain HTTP: `POST /tasks/{name}` with the task arguments as the JSON body, and
 * `GET /tasks/{id}` to poll. Raw routes (not endpoint definitions) because the body schema, the
 * task name and the answer (idempotent replay, 202 + task id) come from the task pipeline
 * shared with MCP and A2A rather than from one static endpoint schema.
 */
export default definePlugin({
  name: 'host-rest-tasks',
  requires: [Tasks],
  options,
  start(ctx) {
    const deps = taskDeps(ctx);
    const ns = deps.registry.namespace;
    const protocols = ctx.options.protocols;
    ctx.get(Http).add(
      {
        method: 'POST',
        path: joinPath(ctx.options.prefix, '/tasks/{name}'),
        async handle(request, { params }) {
          let input: unknown;
          try {
            input = await readJsonBody(request, ctx.config.server.maxBodyBytes);
          } catch (error) {
            if (!(error instanceof ProtocolError)) throw error;
            return reply({ ok: false, error, body: errorBody(error, ns) });
          }
          return reply(await invokeTask(deps, { name: params.name!, input: input ?? {}, credential: bearerToken(request.headers.get('authorization')), protocols }));
        },
      },
      {
        method: 'GET',
        path: joinPath(ctx.options.prefix, '/tasks/{id}'),
        async handle(request, { params }) {
          const url = new URL(request.url);
          const input: Json = { task_id: params.id };
          if (url.searchParams.get('include_history') === 'true') input.include_history = true;
          return reply(await invokeTask(deps, { name: 'get_task_status', input, credential: bearerToken(request.headers.get('authorization')) }));
        },
      },
    );
  },
});
