import { token } from '../token.ts';
import type { ProtocolError } from '../errors.ts';
import type { Json, RegisteredTask } from '../task.ts';
import type { TaskRecord, TaskStatus } from './tasks.ts';
import type { Principal } from './auth.ts';
import type { SignedRequest } from './request-verifier.ts';

/** One task call as a host received it; the gateway does everything else. */
export interface TaskCall {
  name: string;
  /** The task arguments (task fields plus envelope members), unvalidated. */
  input: unknown;
  /** The request's `Authorization` header, or null. */
  authorization: string | null;
  /** A2A-native push registration in the task store's shape, unvalidated. */
  a2aPush?: unknown;
  /** A2A context id. */
  contextId?: string;
  /** Serve only tasks of these protocol groups (a path-routed mount). */
  protocols?: readonly string[];
  /** The request already passed `admit`: its principal (null when no credential was sent), not re-authenticated. */
  admitted?: { principal: Principal | null };
  /** The mount's protected-resource path (`/sales/mcp`): OAuth access tokens must be minted for it. */
  resource?: string;
}

export type TaskOutcome =
  | { ok: true; status: TaskStatus; body: Json; taskId?: string; task: RegisteredTask }
  | { ok: false; error: ProtocolError; body: Json; task?: RegisteredTask };

/** A task as a host lists it (MCP tool, A2A skill). */
export interface TaskDescription {
  name: string;
  description: string;
  protocol: string;
  mutating: boolean;
  /** `optional`: callable without a credential (capabilities). */
  auth: 'required' | 'optional';
  /** JSON Schema of the arguments: the task's fields and the envelope members the gateway accepts. */
  inputSchema: Json;
}

/** One HTTP request about to be served: what it carries decides which credential and signature it needs. */
export interface AdmissionRequest {
  http: SignedRequest;
  /** Task calls the request carries (name and raw arguments). */
  calls: readonly { name: string; input: unknown }[];
  /** Something besides task calls needs a caller (task polling or cancellation). */
  needsPrincipal: boolean;
  protocols?: readonly string[];
  /** The mount's protected-resource path (`/sales/mcp`, what its RFC 9728 metadata names): OAuth access tokens must be minted for it. */
  resource?: string;
}

export type Admission =
  | { ok: true; principal: Principal | null }
  /**
   * Answer HTTP 401. `scheme` picks the challenge: `Bearer` (missing or invalid credential; the host
   * adds `resource_metadata`) or `Signature` (`error="<signatureError>"`, a request-signing failure).
   */
  | { ok: false; error: ProtocolError; scheme: 'Bearer' | 'Signature'; credentialSent: boolean; signatureError?: string };

/**
 * What hosts call: the one task pipeline (authentication, envelope and input validation,
 * idempotency, handler, durable task record, replay storage). Hosts translate wire shapes
 * only; every protocol rule lives behind this port (plugins/tasks).
 * Contract: test/contract/task-gateway.contract.ts.
 */
export interface TaskGatewayPort {
  /** The deployment's protocol namespace (`proto`, `adcp`). */
  readonly namespace: string;
  /**
   * Transport-level checks before a request is served: its RFC 9421 signature (when the agent
   * verifies request signatures) and its credential (invalid: refused; missing: refused when a call
   * needs a caller). Hosts answer a refusal with HTTP 401 and pass the principal on to `invoke`.
   */
  admit(request: AdmissionRequest): Promise<Admission>;
  /**
   * Never throws for a caller's mistake: failures come back as `ok: false` with the error body
   * (unknown task or one outside `protocols`: INVALID_REQUEST; a handler's unexpected error:
   * SERVICE_UNAVAILABLE, its details logged, not answered). A mutating call that fails stores
   * nothing: a retry with its key executes again.
   */
  invoke(call: TaskCall): Promise<TaskOutcome>;
  /** Tasks served on a mount (all when `protocols` is absent); the `protocol` group is served everywhere. */
  describe(protocols?: readonly string[]): readonly TaskDescription[];
  /**
   * Authorization servers whose access tokens this deployment accepts (the OAuth issuer, when there is
   * one). Empty: credentials are API keys only, and mounts publish no protected-resource metadata.
   */
  readonly authorizationServers: readonly string[];
  /** RFC 9728 protected-resource metadata of a mount whose public URL is `resource` (only with authorization servers). */
  protectedResource(resource: string): Json;
  /** The failure body for an error a host met before invoking (unreadable body, oversized request). */
  errorBody(error: ProtocolError, context?: Json): Json;
  /** A task record of the authenticated caller, or null (unknown or another principal's). Throws AUTH_REQUIRED. */
  getTask(id: string, authorization: string | null, resource?: string): Promise<TaskRecord | null>;
  /** Cancel the caller's non-terminal task; null when unknown. Throws AUTH_REQUIRED. */
  cancelTask(id: string, authorization: string | null, resource?: string): Promise<TaskRecord | null>;
  /**
   * The caller's tasks, newest first, a page at a time; `cursor` is the previous page's `nextCursor`.
   * A cursor that is not one is INVALID_REQUEST. Throws AUTH_REQUIRED.
   */
  listTasks(authorization: string | null, resource?: string, cursor?: string): Promise<{ tasks: TaskRecord[]; nextCursor?: string }>;
}

export const TaskGateway = token<TaskGatewayPort>('core.task-gateway');
