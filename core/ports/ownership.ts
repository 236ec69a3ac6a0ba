import { token } from '../token.ts';
import type { Queryable } from './database.ts';
import type { Principal } from './auth.ts';

/**
 * Proof of domain control for community saves (registry-api "Save-time anti-abuse controls").
 * `assertProven` runs inside the save's transaction and throws a ProtocolError (403
 * `ownership_proof_required`) unless the caller's organization has proven control of `domain`:
 * ever, for a new entry's creation within the rolling window, for a revision of its own entry.
 */
export interface OwnershipPort {
  assertProven(tx: Queryable, principal: Principal, domain: string, action: 'create' | 'revise'): Promise<void>;
}

export const Ownership = token<OwnershipPort>('registry.ownership');
