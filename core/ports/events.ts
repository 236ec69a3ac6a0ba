import { token } from '../token.ts';
import type { Queryable } from './database.ts';

/** A change to record in the registry feed. */
export interface NewEvent {
  event_type: string;
  entity_type: string;
  /** UUID of the entity. */
  entity_id: string;
  payload: Record<string, unknown>;
  actor: string;
}

export interface FeedEvent extends NewEvent {
  event_id: string;
  created_at: string;
}

/**
 * The registry's event store. `append` writes inside the caller's transaction, so an event
 * exists exactly when the change it describes committed. Readers never miss an event, even
 * when writers commit out of order (see plugins/registry-feed).
 */
export interface EventLogPort {
  append(tx: Queryable, events: NewEvent | readonly NewEvent[]): Promise<void>;
}

export const EventLog = token<EventLogPort>('registry.event-log');
