import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { requestContext, type Json } from '../../core/task.ts';
import { ProtocolError } from '../../core/errors.ts';
import { TaskGateway, type Admission, type TaskOutcome } from '../../core/ports/task-gateway.ts';
import { joinPath } from '../shared/paths.ts';
import { challenge, mountUrls, protectedResourceRoutes } from '../shared/auth-discovery.ts';
import { signedRequest } from '../../lib/rfc9421/request.ts';
import { parseJsonBytes, readJsonBytes } from './request.ts';

const prefix = v.optional(v.pipe(v.string(), v.regex(/^(\/[A-Za-z0-9_-]+)*$/, 'must be empty or an absolute path without trailing slash')), '');
const mount = v.object({ prefix, protocols: v.optional(v.array(v.string())) });

const options = v.object({
  /** Path prefix (`/signals` serves `/signals/tasks/{name}`). */
  prefix,
  protocols: v.optional(v.array(v.string())),
  /** Several prefixes, each serving its protocol groups (path-routed agents); replaces prefix/protocols. */
  mounts: v.optional(v.array(mount)),
});

const JSON_TYPE = { 'content-type': 'application/json' };

function reply(outcome: TaskOutcome, challengeHeader?: string): Response {
  if (outcome.ok) {
    // 202 for an accepted asynchronous call (poll GET /tasks/{id}); 200 for a final body.
    const status = outcome.status === 'submitted' || outcome.status === 'working' ? 202 : 200;
    const headers: Record<string, string> = { ...JSON_TYPE };
    if (outcome.taskId && status === 202) headers.location = `tasks/${outcome.taskId}`;
    return new Response(JSON.stringify(outcome.body), { status, headers });
  }
  const e = outcome.error;
  const headers: Record<string, string> = { ...JSON_TYPE };
  if (e.retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(e.retryAfter)));
  if (e.status === 401) headers['www-authenticate'] = challengeHeader ?? 'Bearer';
  // REST error body `{error, message}` plus the task failure members (code, errors, {ns}_error).
  return new Response(JSON.stringify({ error: String(outcome.body.code).toLowerCase(), ...outcome.body }), { status: e.status, headers });
}

/**
 * Tasks over plain HTTP: `POST /tasks/{name}` with the task arguments as the JSON body, and
 * `GET /tasks/{id}` to poll. Raw routes (not endpoint definitions) because the body schema, the
 * task name and the answer (idempotent replay, 202 + task id) come from the task gateway
 * shared with MCP and A2A rather than from one static endpoint schema. A missing or invalid
 * credential is 401 with a Bearer challenge (pointing at `/.well-known/oauth-protected-resource{prefix}/tasks`
 * when the deployment has an OAuth issuer).
 */
export default definePlugin({
  name: 'host-rest-tasks',
  deps: { gateway: TaskGateway, http: Http },
  options,
  init({ gateway, http }, kernel) {
    const { publicUrl, maxBodyBytes } = kernel.config.server;
    const mounts = kernel.options.mounts ?? [{ prefix: kernel.options.prefix, protocols: kernel.options.protocols }];
    for (const { prefix, protocols } of mounts) addMount(prefix, protocols);
    function addMount(prefix: string, protocols: string[] | undefined) {
      const mountPath = joinPath(prefix, '/tasks');
      const refuse = (request: Request, admission: Extract<Admission, { ok: false }>, context?: Json) =>
        reply(
          { ok: false, error: admission.error, body: gateway.errorBody(admission.error, context) },
          challenge(admission, gateway, mountUrls(kernel.config.server, request, mountPath)),
        );
      http.add(
        ...protectedResourceRoutes(gateway, kernel.config.server, mountPath),
        {
          method: 'POST',
          path: joinPath(prefix, '/tasks/{name}'),
          async handle(request, { params }) {
            let bytes: Uint8Array;
            let input: unknown;
            try {
              bytes = await readJsonBytes(request, maxBodyBytes, '');
              input = parseJsonBytes(bytes, '') ?? {};
            } catch (error) {
              if (!(error instanceof ProtocolError)) throw error;
              return reply({ ok: false, error, body: gateway.errorBody(error) });
            }
            const name = params.name!;
            const admission = await gateway.admit({
              http: signedRequest(publicUrl, request, bytes),
              calls: [{ name, input }],
              needsPrincipal: false,
              protocols,
              resource: mountPath,
            });
            if (!admission.ok) return refuse(request, admission, requestContext(input));
            return reply(
              await gateway.invoke({
                name,
                input,
                authorization: request.headers.get('authorization'),
                protocols,
                resource: mountPath,
                admitted: { principal: admission.principal },
              }),
            );
          },
        },
        {
          method: 'GET',
          path: joinPath(prefix, '/tasks/{id}'),
          async handle(request, { params }) {
            const admission = await gateway.admit({
              http: signedRequest(publicUrl, request, new Uint8Array()),
              calls: [],
              needsPrincipal: true,
              protocols,
              resource: mountPath,
            });
            if (!admission.ok) return refuse(request, admission);
            const url = new URL(request.url);
            const input: Json = { task_id: params.id };
            if (url.searchParams.get('include_history') === 'true') input.include_history = true;
            return reply(
              await gateway.invoke({
                name: 'get_task_status',
                input,
                authorization: request.headers.get('authorization'),
                resource: mountPath,
                admitted: { principal: admission.principal },
              }),
            );
          },
        },
      );
    }
  },
});
