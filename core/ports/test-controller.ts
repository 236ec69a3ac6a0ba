import type * as v from 'valibot';
import { token } from '../token.ts';
import type { Principal } from './auth.ts';
import type { Queryable } from './database.ts';

/** Error vocabulary of a controller answer (comply-test-controller-response.json ControllerError). */
export type ScenarioErrorCode = 'INVALID_TRANSITION' | 'INVALID_STATE' | 'NOT_FOUND' | 'INVALID_PARAMS' | 'FORBIDDEN';

/** A scenario that cannot run: answered in band (`success: false`), nothing written. */
export class ScenarioError extends Error {
  override name = 'ScenarioError';
  constructor(
    readonly code: ScenarioErrorCode,
    message: string,
    /** The entity's state, or null when it does not exist. */
    readonly currentState?: string | null,
  ) {
    super(message);
  }
}

/** What a scenario did: a forced transition, injected figures, or a seeded fixture. */
export type ScenarioResult =
  | { kind: 'transition'; previous_state: string; current_state: string; message?: string }
  | { kind: 'simulation'; simulated: Record<string, unknown>; cumulative?: Record<string, unknown>; message?: string }
  | { kind: 'seed'; message?: string }
  /** A one-shot response-arm directive registered for the caller's next matching call. */
  | { kind: 'directive'; forced: { arm: string; task_id?: string }; message?: string };

export interface ScenarioContext<P> {
  params: P;
  principal: Principal;
  /** The request's sandbox account reference, when it names one (3.1 sends it; 3.0 has none). */
  account?: Readonly<Record<string, unknown>>;
}

/**
 * One deterministic test control (`force_media_buy_status`, `seed_plan`...), contributed by the
 * plugin that owns the entity it moves. `protocol` is the group it belongs to: a path-routed
 * mount offers only its groups' scenarios. `params` validates the request's `params` (bad params
 * are INVALID_REQUEST naming the field).
 */
export interface TestScenario<P = any> {
  name: string;
  protocol: string;
  /** Other groups whose mounts offer the scenario too (a creative library's, seller and creative agent). */
  servedWith?: readonly string[];
  description: string;
  params: v.GenericSchema<unknown, P>;
  run(ctx: ScenarioContext<P>): Promise<ScenarioResult>;
}

/**
 * The test controller of a sandbox deployment (plugins/test-controller): features register their
 * scenarios in `init` when the port is bound; deployments without the controller have none.
 * Scenarios must refuse entities of non-sandbox accounts (FORBIDDEN).
 */
export interface TestControllerPort {
  /** Whether the controller serves (a sandbox deployment): features look for its directives only then. */
  readonly active: boolean;
  register(...scenarios: TestScenario[]): void;
  /** Tools whose calls reach an upstream (ad server, activation platform) that force_upstream_unavailable can cut off. */
  declareUpstreams(...tools: string[]): void;
  /** Whether this caller's calls to `tool` find its upstream unreachable now (force_upstream_unavailable); read on the caller's `q`. Asked only when `active`. */
  upstreamDown(q: Queryable, principalId: string, tool: string): Promise<boolean>;
}

/** A scenario typed from its params schema. */
export function defineScenario<P>(scenario: TestScenario<P>): TestScenario<P> {
  return scenario;
}

export const TestController = token<TestControllerPort>('core.test-controller');
