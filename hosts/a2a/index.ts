import * as v from 'valibot';
import { TaskState, Role, type AgentCard, type Task, type Message, type Part, type SendMessageRequest } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { JsonRpcRequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { requestContext, type Json } from '../../core/task.ts';
import { ProtocolError } from '../../core/errors.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { Principal } from '../../core/ports/auth.ts';
import { Clock, type ClockPort } from '../../core/ports/clock.ts';
import { TaskGateway, type TaskGatewayPort } from '../../core/ports/task-gateway.ts';
import type { TaskRecord, TaskStatus } from '../../core/ports/tasks.ts';
import { joinPath } from '../shared/paths.ts';
import { trustedBaseUrl, untrustedHostResponse } from '../../lib/urls.ts';
import { challenge, mountUrls, protectedResourceRoutes } from '../shared/auth-discovery.ts';
import { signedRequest } from '../../lib/rfc9421/request.ts';
import { parseJsonBytes, readJsonBytes } from '../rest/request.ts';

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
/** A2A context ids are opaque strings; this one is stored with the task, so it is bounded. */
const CONTEXT_ID = v.pipe(v.string(), v.minLength(1), v.maxLength(255, 'must be at most 255 characters'));
const TASK_ID = v.pipe(v.string('is required'), v.minLength(1, 'is required'), v.maxLength(255, 'must be at most 255 characters'));
const FINAL = new Set<TaskStatus>(['completed', 'failed', 'canceled', 'rejected']);

const dataPart = (value: Json): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });
const CREDENTIAL = 'credential';
/** The request's trusted base URL, carried per call (never shared between requests). */
const BASE = 'base';
/** Set once the SDK hands the call to our handler: a -32603 before that is the SDK failing on the client's input. */
const REACHED = 'reached';

/** JSON-RPC code of transport-level authentication failures (as on MCP; transport-error-mapping vectors). */
const AUTH_ERROR_CODE = -32028;

const PRINCIPAL = 'principal';
/** Methods that send a message (and so call a skill); every other method reads or cancels a task. */
const SEND_METHODS = new Set(['message/send', 'message/stream', 'SendMessage', 'SendStreamingMessage']);

/** `{skill, input}` of a raw JSON-RPC send (0.3 `{kind:'data', data}` and 1.0 `{data}` parts alike), for admission. */
function rawSkillCall(params: any): { name: string; input: unknown } | null {
  const parts: unknown[] = Array.isArray(params?.message?.parts) ? params.message.parts : [];
  for (const part of parts) {
    const data = (part as { data?: any })?.data;
    if (data && typeof data === 'object' && typeof data.skill === 'string') return { name: data.skill, input: data.input ?? data.parameters ?? {} };
  }
  return null;
}

/** A ProtocolError raised outside a task (polling, cancelling) as a JSON-RPC error instead of -32603. */
function rpcError(error: ProtocolError) {
  return new JsonRpcRequestMalformedError({ message: error.message, envelopeCode: error.status === 401 ? AUTH_ERROR_CODE : -32602 });
}

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
    artifacts: final
      ? [{ artifactId: `${id}-result`, name: skill, description: '', parts: [...text, dataPart(body)], metadata: undefined, extensions: [] }]
      : [],
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

/** The A2A-native registration in the task store's shape; the gateway validates it. */
function a2aPush(request: SendMessageRequest): unknown {
  const c = request.configuration?.taskPushNotificationConfig;
  if (!c) return undefined;
  return {
    url: c.url,
    ...(c.id ? { id: c.id } : {}),
    ...(c.token ? { token: c.token } : {}),
    ...(c.authentication ? { authentication: { schemes: [c.authentication.scheme], credentials: c.authentication.credentials || undefined } } : {}),
  };
}

class TaskRequestHandler implements A2ARequestHandler {
  constructor(
    private readonly gateway: TaskGatewayPort,
    private readonly clock: ClockPort,
    /** The card for a base URL; '' (relative URLs) when no request is at hand. */
    private readonly card: (base: string) => AgentCard,
    private readonly protocols: readonly string[] | undefined,
    /** The JSON-RPC path: the protected resource OAuth tokens must be minted for. */
    private readonly resource: string,
  ) {}

  async getAgentCard() {
    return this.card('');
  }
  async getAuthenticatedExtendedAgentCard(_params: unknown, context: ServerCallContext) {
    context.state.set(REACHED, true);
    return this.card((context.state.get(BASE) as string | undefined) ?? '');
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    context.state.set(REACHED, true);
    const authorization = (context.state.get(CREDENTIAL) as string | null) ?? null;
    let contextId: string = crypto.randomUUID();
    let skill = 'unknown';
    try {
      if (params.message?.contextId) contextId = parseOrThrow(CONTEXT_ID, params.message.contextId, 'message.contextId');
      const call = skillCall(params.message);
      skill = call.skill;
      const outcome = await this.gateway.invoke({
        name: call.skill,
        input: call.input,
        authorization,
        a2aPush: a2aPush(params),
        contextId,
        protocols: this.protocols,
        resource: this.resource,
        admitted: { principal: (context.state.get(PRINCIPAL) as Principal | null | undefined) ?? null },
      });
      const status: TaskStatus = outcome.ok ? outcome.status : 'failed';
      // A synchronous result has no durable task; A2A still needs an id for the Task object.
      const id = (outcome.ok && outcome.taskId) || crypto.randomUUID();
      return toA2aTask(id, contextId, status, outcome.body, skill, this.clock.now());
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      return toA2aTask(crypto.randomUUID(), contextId, 'failed', this.gateway.errorBody(error), skill, this.clock.now());
    }
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext) {
    yield { payload: { $case: 'task' as const, value: await this.sendMessage(params, context) } };
  }

  private authorization(context: ServerCallContext): string | null {
    return (context.state.get(CREDENTIAL) as string | null) ?? null;
  }

  /** Run a task-store call for the caller; ProtocolErrors (401, a malformed id) become JSON-RPC errors. */
  private async stored(context: ServerCallContext, id: unknown, run: (id: string, authorization: string | null) => Promise<TaskRecord | null>): Promise<Task> {
    context.state.set(REACHED, true);
    let task: TaskRecord | null;
    try {
      task = await run(parseOrThrow(TASK_ID, id, 'params.id'), this.authorization(context));
    } catch (error) {
      throw error instanceof ProtocolError ? rpcError(error) : error;
    }
    if (!task) throw new TaskNotFoundError(`Task ${String(id).slice(0, 80)} not found`);
    return recordToA2a(task);
  }

  getTask(params: { id: string }, context: ServerCallContext): Promise<Task> {
    return this.stored(context, params.id, (id, authorization) => this.gateway.getTask(id, authorization, this.resource));
  }

  cancelTask(params: { id: string }, context: ServerCallContext): Promise<Task> {
    return this.stored(context, params.id, (id, authorization) => this.gateway.cancelTask(id, authorization, this.resource));
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
  // biome-ignore lint/correctness/useYield: the SDK's interface is a generator; this one refuses before yielding.
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
  deps: { gateway: TaskGateway, http: Http, clock: Clock },
  options,
  init({ gateway, http, clock }, kernel) {
    for (const m of kernel.options.mounts) {
      const rpcPath = joinPath(m.prefix, '/a2a');
      const skills = () =>
        gateway.describe(m.protocols).map((t) => ({
          id: t.name,
          name: t.name,
          description: t.description,
          tags: [t.protocol, ...(t.mutating ? ['mutating'] : [])],
          examples: [],
          inputModes: ['application/json'],
          outputModes: ['application/json'],
          securityRequirements: [],
        }));
      const name = m.name ?? kernel.config.name;
      // Described on first use: every feature has registered its tasks by then.
      const description = () => m.description ?? `${name}: ${[...new Set(gateway.describe(m.protocols).map((t) => t.protocol))].join(', ')} tasks`;
      const cardV1 = (base: string): AgentCard =>
        ({
          name,
          description: description(),
          version: '1.0.0',
          supportedInterfaces: [
            { url: base + rpcPath, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
            { url: base + rpcPath, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
          ],
          provider: undefined,
          capabilities: { streaming: false, pushNotifications: true, extensions: [], extendedAgentCard: false },
          securitySchemes: {
            bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'API key or test token', scheme: 'Bearer', bearerFormat: '' } } },
          },
          securityRequirements: [{ schemes: { bearer: { list: [] } } }],
          defaultInputModes: ['application/json'],
          defaultOutputModes: ['application/json'],
          skills: skills(),
          signatures: [],
        }) as unknown as AgentCard;
      // JSON forms of the card: 1.0 (proto JSON) and 0.3 for clients without `A2A-Version`.
      const cardJson = (base: string, request: Request): Json => {
        const common = {
          name,
          description: description(),
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
      const handler = new TaskRequestHandler(gateway, clock, cardV1, m.protocols, rpcPath);
      const v1 = new JsonRpcTransportHandler(handler);
      const legacy = new LegacyJsonRpcTransportHandler(handler);

      const serveCard = (request: Request) => {
        const base = trustedBaseUrl(kernel.config.server, request);
        if (base === null) return untrustedHostResponse();
        return new Response(JSON.stringify(cardJson(base, request)), {
          headers: { 'content-type': 'application/json', vary: 'A2A-Version', 'cache-control': 'public, max-age=300' },
        });
      };
      http.add(
        ...protectedResourceRoutes(gateway, kernel.config.server, rpcPath),
        { method: 'GET', path: joinPath(m.prefix, '/.well-known/agent-card.json'), handle: serveCard },
        { method: 'GET', path: joinPath(m.prefix, '/.well-known/agent.json'), handle: serveCard },
        {
          method: 'POST',
          path: rpcPath,
          async handle(request) {
            const { publicUrl, maxBodyBytes } = kernel.config.server;
            let bytes: Uint8Array;
            let body: unknown;
            try {
              bytes = await readJsonBytes(request, maxBodyBytes, '');
              body = parseJsonBytes(bytes, '');
            } catch (error) {
              if (!(error instanceof ProtocolError)) throw error;
              const code = /malformed JSON/.test(error.message) ? -32700 : -32600;
              return Response.json({ jsonrpc: '2.0', id: null, error: { code, message: error.message } });
            }
            const rpcBody = (body ?? {}) as Record<string, any>;
            const send = SEND_METHODS.has(String(rpcBody.method));
            const call = send ? rawSkillCall(rpcBody.params) : null;
            const admission = await gateway.admit({
              http: signedRequest(publicUrl, request, bytes),
              calls: call ? [call] : [],
              needsPrincipal: !send,
              protocols: m.protocols,
              resource: rpcPath,
            });
            if (!admission.ok) {
              const failure = gateway.errorBody(admission.error, requestContext(call?.input));
              const header = challenge(admission, gateway, mountUrls(kernel.config.server, request, rpcPath));
              const data = { [`${gateway.namespace}_error`]: failure[`${gateway.namespace}_error`], ...(failure.context ? { context: failure.context } : {}) };
              return Response.json(
                { jsonrpc: '2.0', id: rpcBody.id ?? null, error: { code: AUTH_ERROR_CODE, message: admission.error.message, data } },
                { status: 401, headers: { 'www-authenticate': header } },
              );
            }
            const version = request.headers.get('a2a-version') ?? '0.3';
            const state = new Map<string, unknown>([
              [CREDENTIAL, request.headers.get('authorization')],
              [PRINCIPAL, admission.principal],
              [BASE, trustedBaseUrl(kernel.config.server, request) ?? ''],
            ]);
            const context = new ServerCallContext({ requestedVersion: version, state });
            const rpc = version.startsWith('1.') ? v1 : legacy;
            let result = await rpc.handle(rpcBody, context);
            const failed = result as { error?: { code?: number; message?: string } } | null;
            if (failed?.error?.code === -32603 && !state.get(REACHED)) {
              // The SDK's request translation threw on a malformed message (e.g. `schemes` not an
              // array) before our handler ran: that is the caller's invalid params, not our fault.
              result = { ...failed, error: { code: -32602, message: `Invalid params: ${failed.error.message ?? 'malformed request'}` } } as typeof result;
            }
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
