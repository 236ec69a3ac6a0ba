import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { ScenarioError } from '../../core/ports/test-controller.ts';
import type { Deferral, Json, TaskHandle } from '../../core/task.ts';

/** How long a read forced to `submitted` waits for force_task_completion before it fails. */
const FORCED_READ_TTL_MS = 24 * 3600_000;

/** Params of the `force_*_arm` scenarios (comply-test-controller-request.json). */
export const forcedArmParams = v.object({
  arm: v.picklist(['submitted', 'input-required'], 'must be submitted or input-required'),
  task_id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'))),
  message: v.optional(v.pipe(v.string(), v.maxLength(2000, 'must be at most 2000 characters'))),
});

/** The task_id of a `submitted` arm; any other arm is INVALID_PARAMS (`operation` never waits on the buyer). */
export function submittedArm(params: v.InferOutput<typeof forcedArmParams>, operation: string): string {
  if (params.arm !== 'submitted') throw new ScenarioError('INVALID_PARAMS', `arm: only submitted is offered (${operation} never asks the buyer for input)`);
  if (!params.task_id) throw new ScenarioError('INVALID_PARAMS', 'task_id: is required with arm submitted');
  return params.task_id;
}

/**
 * The `submitted` answer of a read a directive forced: its result comes from force_task_completion;
 * `partial` is what the read's response schema requires even when empty.
 */
export function deferForcedRead(task: TaskHandle, forced: { task_id: string; message: string | null }, now: Date, partial: Json, message: string): Deferral {
  return task.defer({
    status: 'submitted',
    message: forced.message ?? message,
    handle: forced.task_id,
    partial,
    state: { forced: true },
    runAt: new Date(now.getTime() + FORCED_READ_TTL_MS),
  });
}

/** `resume` of a forced read nobody completed. */
export function expireForcedRead(): never {
  throw new ProtocolError('SERVICE_UNAVAILABLE', 'This sandbox task was forced to submitted and not completed (force_task_completion) within a day', {
    recovery: 'terminal',
  });
}

/** What a tool answers while a sandbox outage (force_upstream_unavailable) cuts the caller off its upstream; nothing is written. */
export function upstreamUnavailable(tool: string, upstream: string): ProtocolError {
  return new ProtocolError('SERVICE_UNAVAILABLE', `${tool}: ${upstream} cannot be reached (sandbox outage); retry later`, {
    status: 503,
    recovery: 'transient',
    retryAfter: 60,
  });
}
