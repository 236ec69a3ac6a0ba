import * as v from 'valibot';
import { TaskState, Role, type AgentCard, type Task, type Message, type Part, type SendMessageRequest } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { Tasks, type Json } from '../../core/task.ts';
import { errorBody, invokeTask, resolvePrincipal, type InvokeDeps } from '../../core/task-invoke.ts';
import { ProtocolError } from '../../core/errors.ts';
import { bearerToken } from '../../core/ports/auth.ts';
import type { A2aPushConfig, TaskRecord, TaskStatus } from '../../core/ports/tasks.ts';
import { baseUrl, joinPath, taskDeps } from '../tasks/deps.ts';
import { readJsonBody } from '../rest/request.ts';

const mount = v.object({
  /** Path prefix of this agent: card at `{prefix}/.well-known/agent-card.json`, JSON-RPC at `{prefix}/a2a`. */
  prefix: v.optional(v.pipe(v.string(), v.regex(/^(\/[A-Za-z0-9_-]+)*$/, 'must be empty or an absolute path without trailing slash')), ''),
  protocols: v.optional(v.array(v.string())),
  name: v.optional(v.string()),
  description: v.optional(v.string()),
});

const options = v.object({
  mounts: v.optional(v.array(mount), [{ prefix: '' }]),
});

const STATE: Record<TaskStatus, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
  rejected: TaskState.TASK_STATE_REJECTED,
};
const FINAL = new Set<TaskStatus>(['completed', 'failed', 'canceled', 'rejected']);

const dataPart = (value: Json): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });
const CREDENTIAL = 'credential';

function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return { messageId: crypto.randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/**
 * An A2A Task for a task body. Final states carry the body as the artifact's DataPart
 * (canonical), interim states in `status.message` (the fallback container).
 */
function toA2aTask(id: string, contextId: string, status: TaskStatus, body: Json, skill: string, timestamp: Date, message?: string | null): Task {
  const final = FINAL.has(status);
  const text: Part[] = message ? [{ content: { $case: 'text', value: message }, metadata: undefined, filename: '', mediaType: 'text/plain' }] : [];
  return {
    id,
    contextId,
    status: { state: STATE[status], message: final ? undefined : agentMessage(id, contextId, [...text, dataPart(body)]), timestamp: timestamp.toISOString() },
    artifacts: final ? [{ artifactId: `${id}-result`, name: skill, description: '', parts: [...text, dataPart(body)], metadata: undefined, extensions: [] }] : [],
    history: [],
    metadata: { skill },
  };
}

function recordToA2a(task: TaskRecord): Task {
  const body: Json = task.result ?? { status: task.status };
  const interim = task.status === 'working' && task.progress ? { ...body, ...task.progress } : body;
  return toA2aTask(task.id, task.contextId, task.status, { ...interim, status: task.status, task_id: task.id }, task.taskType, task.updatedAt, task.message);
}

/** `{skill, input}` (or the older `{skill, parameters}`) from exactly one DataPart. */
function skillCall(message: Message | undefined): { skill: string; input: unknown } {
  const data = (message?.parts ?? []).filter((p) => p.content?.$case === 'data');
  if (data.length !== 1) {
    throw new ProtocolError('INVALID_REQUEST', 'message.parts: send exactly one DataPart {skill, input}', { field: 'message.parts' });
  }
  const value = (data[0]!.content as { value: any }).value;
  if (!value || typeof value !== 'object' || typeof value.skill !== 'string' || !value.skill) {
    throw new ProtocolError('INVALID_REQUEST', 'message.parts[].data.skill: is required', { field: 'message.parts[].data.skill' });
  }
  return { skill: value.skill, input: value.input ?? value.parameters ?? {} };
}

function a2aPush(request: SendMessageRequest): A2aPushConfig | undefined {
  const c = request.configuration?.taskPushNotificationConfig;
  if (!c?.url) return undefined;
  if (!/^https?:\/\//i.test(c.url) || c.url.length > 2048) {
    throw new ProtocolError('INVALID_REQUEST', 'configuration.pushNotificationConfig.url: must be an http(s) URL', { field: 'configuration.pushNotificationConfig.url' });
  }
  return {
    url: c.url,
    ...(c.id ? { id: c.id } : {}),
    ...(c.token ? { token: c.token } : {}),
    ...(c.authentication ? { authentication: { schemes: [c.authentication.scheme], credentials: c.authentication.credentials || undefined } } : {}),
  };
}

class TaskRequestHandler implements A2ARequestHandler {
  constructor(
    private readonly deps: InvokeDeps,
    private readonly card: () => AgentCard,
    private readonly protocols: readonly string[] | undefined,
  ) {}

  async getAgentCard() {
    return this.card();
  }
  async getAuthenticatedExtendedAgentCard() {
    return this.card();
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    const credential = (context.state.get(CREDENTIAL) as string | null) ?? null;
    const contextId = params.message?.contextId || crypto.randomUUID();
    let skill = 'unknown';
    try {
      const call = skillCall(params.message);
      skill = call.skill;
      const outcome = await invokeTask(this.deps, { name: call.skill, input: call.input, credential, a2aPush: a2aPush(params), contextId, protocols: this.protocols });
      const status: TaskStatus = outcome.ok ? outcome.status : 'failed';
      // A synchronous result has no durable task; A2A still needs an id for the Task object.
      const id = (outcome.ok && outcome.taskId) || crypto.randomUUID();
      return toA2aTask(id, contextId, status, outcome.body, skill, this.deps.clock.now());
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      return toA2aTask(crypto.randomUUID(), contextId, 'failed', errorBody(error, this.deps.registry.namespace), skill, this.deps.clock.now());
    }
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext) {
    yield { payload: { $case: 'task' as const, value: await this.sendMessage(params, context) } };
  }

  private async principal(context: ServerCallContext) {
    return resolvePrincipal(this.deps.auth, (context.state.get(CREDENTIAL) as string | null) ?? null);
  }

  async getTask(params: { id: string }, context: ServerCallContext): Promise<Task> {
    const principal = await this.principal(context);
    const task = this.deps.store ? await this.deps.store.get(params.id, principal.id) : null;
    if (!task) throw new TaskNotFoundError(`Task ${params.id} not found`);
    return recordToA2a(task);
  }

  async cancelTask(params: { id: string }, context: ServerCallContext): Promise<Task> {
    const principal = await this.principal(context);
    const task = this.deps.store ? await this.deps.store.cancel(params.id, principal.id) : null;
    if (!task) throw new TaskNotFoundError(`Task ${params.id} not found`);
    return recordToA2a(task);
  }

  async listTasks(): Promise<never> {
    throw new UnsupportedOperationError('tasks/list is not supported; poll tasks by id');
  }
  async createTaskPushNotificationConfig(): Promise<never> {
    throw new UnsupportedOperationError('Register push notifications in configuration.pushNotificationConfig of message/send');
  }
  async getTaskPushNotificationConfig(): Promise<never> {
    throw new UnsupportedOperationError('Not supported');
  }
  async listTaskPushNotificationConfigs(): Promise<never> {
    throw new UnsupportedOperationError('Not supported');
  }
  async deleteTaskPushNotificationConfig(): Promise<never> {
    throw new UnsupportedOperationError('Not supported');
  }
  async *resubscribe(): AsyncGenerator<never> {
    throw new UnsupportedOperationError('Streaming is not supported; poll tasks/get');
  }
}

/**
 * A2A host: agent card (skills = tasks) at `/.well-known/agent-card.json` and `/.well-known/agent.json`,
 * JSON-RPC through the SDK's transport handlers without Express: A2A 1.0 (`A2A-Version: 1.0`,
 * `SendMessage`/`GetTask`) and 0.3 (`message/send`/`tasks/get`) for clients without the header.
 */
export default definePlugin({
  name: 'host-a2a',
  requires: [Tasks],
  options,
  start(ctx) {
    const deps = taskDeps(ctx);
    const http = ctx.get(Http);
    const registry = ctx.get(Tasks);
    for (const m of ctx.options.mounts) {
      const rpcPath = joinPath(m.prefix, '/a2a');
      const skills = () =>
        registry.list(m.protocols).map((t) => ({
          id: t.name,
          name: t.name,
          description: t.description,
          tags: [t.protocol, ...(t.mutating ? ['mutating'] : [])],
          examples: [],
          inputModes: ['application/json'],
          outputModes: ['application/json'],
          securityRequirements: [],
        }));
      const name = m.name ?? ctx.config.name;
      const description = m.description ?? `${name}: ${[...new Set(registry.list(m.protocols).map((t) => t.protocol))].join(', ')} tasks`;
      const cardV1 = (base: string): AgentCard =>
        ({
          name,
          description,
          version: '1.0.0',
          supportedInterfaces: [
            { url: base + rpcPath, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
            { url: base + rpcPath, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
          ],
          provider: undefined,
          capabilities: { streaming: false, pushNotifications: true, extensions: [], extendedAgentCard: false },
          securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'API key or test token', scheme: 'Bearer', bearerFormat: '' } } } },
          securityRequirements: [{ schemes: { bearer: { list: [] } } }],
          defaultInputModes: ['application/json'],
          defaultOutputModes: ['application/json'],
          skills: skills(),
          signatures: [],
        }) as unknown as AgentCard;
      // JSON forms of the card: 1.0 (proto JSON) and 0.3 for clients without `A2A-Version`.
      const cardJson = (request: Request): Json => {
        const base = baseUrl(ctx.config.server.publicUrl, request);
        const common = {
          name,
          description,
          version: '1.0.0',
          capabilities: { streaming: false, pushNotifications: true },
          defaultInputModes: ['application/json'],
          defaultOutputModes: ['application/json'],
          skills: skills().map(({ securityRequirements: _s, ...s }) => s),
        };
        if (request.headers.get('a2a-version')?.startsWith('1.')) {
          return {
            ...common,
            supportedInterfaces: [
              { url: base + rpcPath, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
              { url: base + rpcPath, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
            ],
            securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'API key or test token' } } },
            securityRequirements: [{ schemes: { bearer: { list: [] } } }],
          };
        }
        return {
          ...common,
          protocolVersion: '0.3.0',
          url: base + rpcPath,
          preferredTransport: 'JSONRPC',
          additionalInterfaces: [{ url: base + rpcPath, transport: 'JSONRPC' }],
          securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key or test token' } },
          security: [{ bearer: [] }],
        };
      };
      let lastBase = '';
      const handler = new TaskRequestHandler(deps, () => cardV1(lastBase), m.protocols);
      const v1 = new JsonRpcTransportHandler(handler);
      const legacy = new LegacyJsonRpcTransportHandler(handler);

      const serveCard = (request: Request) =>
        new Response(JSON.stringify(cardJson(request)), { headers: { 'content-type': 'application/json', vary: 'A2A-Version', 'cache-control': 'public, max-age=300' } });
      http.add(
        { method: 'GET', path: joinPath(m.prefix, '/.well-known/agent-card.json'), handle: serveCard },
        { method: 'GET', path: joinPath(m.prefix, '/.well-known/agent.json'), handle: serveCard },
        {
          method: 'POST',
          path: rpcPath,
          async handle(request) {
            lastBase = baseUrl(ctx.config.server.publicUrl, request);
            let body: unknown;
            try {
              body = await readJsonBody(request, ctx.config.server.maxBodyBytes);
            } catch (error) {
              const e = error as ProtocolError;
              return Response.json({ jsonrpc: '2.0', id: null, error: { code: e.code === 'PAYLOAD_TOO_LARGE' ? -32600 : -32700, message: e.message } });
            }
            const version = request.headers.get('a2a-version') ?? '0.3';
            const context = new ServerCallContext({
              requestedVersion: version,
              state: new Map<string, unknown>([[CREDENTIAL, bearerToken(request.headers.get('authorization'))]]),
            });
            const rpc = version.startsWith('1.') ? v1 : legacy;
            const result = await rpc.handle((body ?? {}) as Record<string, unknown>, context);
            if (result && typeof (result as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
              // Streaming methods: one SSE event per envelope.
              const stream = result as AsyncGenerator<unknown>;
              const encoder = new TextEncoder();
              return new Response(
                new ReadableStream({
                  async start(controller) {
                    try {
                      for await (const event of stream) controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`));
                    } finally {
                      controller.close();
                    }
                  },
                }),
                { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } },
              );
            }
            return Response.json(result);
          },
        },
      );
    }
  },
});
