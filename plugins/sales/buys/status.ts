import { ProtocolError } from '../../../core/errors.ts';
import { TERMINAL, type BuyStatus } from './store.ts';

/** Actions a buyer may take, per status (the 3.0 `valid_actions` vocabulary, a subset of 3.1's). */
export type ValidAction = 'pause' | 'resume' | 'cancel' | 'update_budget' | 'update_dates' | 'update_packages' | 'add_packages' | 'sync_creatives';

const EDITS: ValidAction[] = ['update_budget', 'update_dates', 'update_packages', 'add_packages', 'sync_creatives'];

export const VALID_ACTIONS: Record<BuyStatus, readonly ValidAction[]> = {
  pending_review: [],
  // A buy can be held before its start: it then waits paused until resumed.
  pending_creatives: ['pause', 'cancel', ...EDITS],
  pending_start: ['pause', 'cancel', ...EDITS],
  active: ['pause', 'cancel', ...EDITS],
  paused: ['resume', 'cancel', ...EDITS],
  completed: [],
  canceled: [],
  rejected: [],
};

/** The lifecycle (agent-protocol "States and transitions", plus the media-buy status enum). */
const TRANSITIONS: Record<BuyStatus, readonly BuyStatus[]> = {
  pending_review: ['pending_creatives', 'pending_start', 'rejected'],
  pending_creatives: ['pending_start', 'paused', 'completed', 'canceled'],
  pending_start: ['active', 'pending_creatives', 'paused', 'completed', 'canceled'],
  active: ['paused', 'completed', 'canceled'],
  // Resumed before it ever started, a buy waits for its start (or its creatives) again.
  paused: ['active', 'pending_start', 'pending_creatives', 'completed', 'canceled'],
  completed: [],
  canceled: [],
  rejected: [],
};

/** Every status change goes through here: a move the lifecycle does not have is INVALID_STATE. */
export function requireTransition(from: BuyStatus, to: BuyStatus, field = 'media_buy_id'): BuyStatus {
  if (from === to || TRANSITIONS[from].includes(to)) return to;
  throw new ProtocolError('INVALID_STATE', `A media buy cannot go from ${from} to ${to}`, { status: 409, field, details: { current_status: from } });
}

/** Refuse an action the buy's status does not allow, naming what is allowed. */
export function requireAction(status: BuyStatus, action: ValidAction, field: string): void {
  if (VALID_ACTIONS[status].includes(action)) return;
  const allowed = VALID_ACTIONS[status];
  throw new ProtocolError('INVALID_STATE', `Cannot ${action.replace('_', ' ')} a media buy that is ${status}`, {
    status: 409,
    field,
    suggestion: allowed.length
      ? `Valid actions now: ${allowed.join(', ')}`
      : TERMINAL.has(status)
        ? 'The media buy has ended; create a new one'
        : 'Wait for the seller to confirm the media buy',
    details: { current_status: status, valid_actions: [...allowed] },
  });
}
