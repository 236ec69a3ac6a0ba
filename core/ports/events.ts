import { token } from '../token.ts';
import type { Queryable } from './database.ts';

/** Who may read an event: every key, member and admin keys, or the owning organization only. */
export type EventVisibility = 'public' | 'members_only' | 'private';

/** A change to record in the registry feed. */
export interface NewEvent {
  event_type: string;
  entity_type: string;
  /** UUID of the entity. */
  entity_id: string;
  payload: Record<string, unknown>;
  actor: string;
  /** The entity's visibility when the change happened (default public), as the catalog applies it. */
  visibility?: EventVisibility;
  /** The organization that owns the entity; it always reads its own events. */
  owner_org_id?: string | null;
}

/** An event as the feed serves it: `visibility` only when restricted, the owner never. */
export interface FeedEvent extends Omit<NewEvent, 'owner_org_id'> {
  event_id: string;
  created_at: string;
}

/**
 * The registry's event store. `append` writes inside the caller's transaction, so an event
 * exists exactly when the change it describes committed (no reader sees it before). Events of one
 * call keep their order, `created_at` is the Clock's time of the append, and `event_id` is
 * assigned later in commit order. Readers never miss an event, even when writers commit out of
 * order (see plugins/registry-feed). Contract: test/contract/event-log.contract.ts.
 */
export interface EventLogPort {
  append(tx: Queryable, events: NewEvent | readonly NewEvent[]): Promise<void>;
  /**
   * Store events that already carry their ids (a mirror copying another registry's feed), in the
   * caller's transaction: same ids and times, events already present skipped; a restricted
   * event keeps its visibility (with no owner here, a private one is then read by no one).
   * Returns how many were new.
   */
  replicate(tx: Queryable, events: readonly FeedEvent[]): Promise<number>;
}

export const EventLog = token<EventLogPort>('registry.event-log');
