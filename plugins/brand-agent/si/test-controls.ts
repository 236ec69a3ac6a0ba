import * as v from 'valibot';
import type { DatabasePort } from '../../../core/ports/database.ts';
import type { ClockPort } from '../../../core/ports/clock.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../../core/ports/test-controller.ts';
import { endSession, findSession } from './store.ts';

/** `force_session_status`: end one of the caller's sessions now, as if it had timed out or been handed off. */
export function forceSessionStatus(db: DatabasePort, clock: ClockPort): TestScenario {
  return defineScenario({
    name: 'force_session_status',
    protocol: 'sponsored_intelligence',
    description: 'End an SI session now: params {session_id, status: complete | terminated, termination_reason?}',
    params: v.object({
      session_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
      status: v.picklist(['complete', 'terminated'], 'must be complete or terminated'),
      termination_reason: v.optional(v.pipe(v.string(), v.regex(/^[a-z_]{1,64}$/, 'must be a reason code such as session_timeout'))),
    }),
    async run({ params, principal }) {
      const s = await findSession(db, params.session_id, principal.id);
      if (!s) throw new ScenarioError('NOT_FOUND', `No session ${params.session_id.slice(0, 64)} of yours`, null);
      if (s.status === 'complete' || s.status === 'terminated')
        throw new ScenarioError('INVALID_TRANSITION', `The session has ended already (${s.status})`, s.status);
      const reason = params.termination_reason ?? (params.status === 'complete' ? 'handoff_complete' : 'host_terminated');
      await endSession(db, s.id, params.status, reason, clock.now());
      return { kind: 'transition', previous_state: s.status, current_state: params.status };
    },
  });
}
