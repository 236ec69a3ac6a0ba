import { ProtocolError } from '../../core/errors.ts';
import { authenticateRequest } from '../../core/ports/auth.ts';
import type { Admission, AdmissionRequest, TaskGatewayPort } from '../../core/ports/task-gateway.ts';
import type { RegisteredTask } from '../../core/task.ts';
import { errorBody, invokeTask, taskPrincipal, type PipelineDeps } from './pipeline.ts';
import { taskInputJsonSchema } from './tool-schema.ts';
import { cancelTask } from './cancel.ts';
import { carriesWebhookCredentials } from '../../lib/rfc9421/request.ts';

const originOf = (url: string): string | null => {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Tasks per listTasks page. */
const TASK_PAGE = 50;

/** The TaskGateway hosts call: admission, the pipeline, tool descriptions and principal-scoped task reads. */
export function createTaskGateway(deps: PipelineDeps): TaskGatewayPort {
  const ns = deps.registry.namespace;
  // Argument schemas are derived once per task (hosts list tools on every tools/list).
  const schemas = new Map<string, Record<string, unknown>>();
  const schemaOf = (task: RegisteredTask) =>
    schemas.get(task.name) ?? schemas.set(task.name, taskInputJsonSchema(task, ns, deps.options.requireOperationId)).get(task.name)!;

  async function admit(request: AdmissionRequest): Promise<Admission> {
    const authorization = request.http.headers.get('authorization');
    if (deps.verifier) {
      const verified = await deps.verifier.verify(request.http, {
        operations: request.calls.map((c) => c.name),
        webhookCredentials: request.calls.some((c) => carriesWebhookCredentials(c.input)),
      });
      if (!verified.ok) {
        const error = new ProtocolError('AUTH_REQUIRED', `Request signature refused: ${verified.message}`, { details: { code: verified.code } });
        return { ok: false, error, scheme: 'Signature', credentialSent: !!authorization, signatureError: verified.code };
      }
    }
    try {
      if (authorization) return { ok: true, principal: await authenticateRequest(deps.auth, authorization, 'optional', undefined, request.resource) };
    } catch (error) {
      if (error instanceof ProtocolError) return { ok: false, error, scheme: 'Bearer', credentialSent: true };
      throw error;
    }
    const served = deps.registry.list(request.protocols);
    const needsCaller =
      request.needsPrincipal ||
      request.calls.some((c) => {
        const task = deps.registry.get(c.name);
        // Unknown tasks are answered as such by invoke; optional ones run anonymously.
        return !!task && served.includes(task) && task.auth !== 'optional';
      });
    if (!needsCaller) return { ok: true, principal: null };
    const error = new ProtocolError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <token>');
    return { ok: false, error, scheme: 'Bearer', credentialSent: false };
  }

  return {
    namespace: ns,
    admit,
    invoke: (call) => invokeTask(deps, call),
    describe: (protocols) =>
      deps.registry.list(protocols).map((task) => ({
        name: task.name,
        description: task.description,
        protocol: task.protocol,
        mutating: !!task.mutating,
        auth: task.auth ?? 'required',
        inputSchema: schemaOf(task),
      })),
    authorizationServers: deps.options.authorizationServers,
    protectedResource(resource) {
      return {
        resource,
        // The issuer as the client reached us (the same host name as the resource it asked about).
        authorization_servers: deps.options.issuerFor ? [deps.options.issuerFor(originOf(resource))] : [...deps.options.authorizationServers],
        bearer_methods_supported: ['header'],
        // Credentials (API keys, test tokens) carry no scopes: a valid one may call every task of the mount.
        scopes_supported: [],
        resource_name: `${resource} (${ns} tasks)`,
      };
    },
    errorBody: (error, context) => errorBody(error, ns, context),
    async getTask(id, authorization, resource) {
      const principal = await taskPrincipal(deps.auth, authorization, 'required', resource);
      return deps.repo.get(id, principal.id);
    },
    async cancelTask(id, authorization, resource) {
      const principal = await taskPrincipal(deps.auth, authorization, 'required', resource);
      return cancelTask(deps.repo, id, principal.id);
    },
    async listTasks(authorization, resource, cursor) {
      const principal = await taskPrincipal(deps.auth, authorization, 'required', resource);
      if (cursor !== undefined && !UUID.test(cursor)) throw new ProtocolError('INVALID_REQUEST', 'cursor is not one this server issued', { field: 'cursor' });
      // One more than a page tells whether there is a next one.
      const rows = await deps.repo.list(principal.id, { after: cursor, limit: TASK_PAGE + 1 });
      const tasks = rows.slice(0, TASK_PAGE);
      return rows.length > TASK_PAGE ? { tasks, nextCursor: tasks.at(-1)!.id } : { tasks };
    },
  };
}
