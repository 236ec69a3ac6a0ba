import { token } from '../token.ts';
import type { Queryable } from './database.ts';
import type { Principal } from './auth.ts';

/** What a save is about to do to a community entry. */
export type OwnershipAction = 'create' | 'revise' | 'rollback';

/** A current proof of control: `orgId` proved `domain` by `method` at `provenAt`, within the re-proof window. */
export interface DomainProof {
  domain: string;
  orgId: string;
  method: 'dns' | 'http';
  provenAt: Date;
}

/**
 * Save-time anti-abuse controls of the hosted registry (registry-api "Save-time anti-abuse
 * controls"), consulted by the community save path when a deployment binds this port. Both
 * methods run inside the save's transaction and throw a ProtocolError, so a refusal writes nothing.
 */
export interface OwnershipPort {
  /**
   * Throws 403 `ownership_proof_required` unless the caller's organization holds a proof of
   * control of exactly `domain` at most the re-proof window old (Clock port), for creation,
   * revision and rollback alike. Another organization's proof never counts. Admins moderate
   * without proof.
   */
  assertProven(tx: Queryable, principal: Principal, domain: string, action: OwnershipAction): Promise<void>;
  /**
   * Before a new entry is created: throws 409 `confusable_domain` when `domain` looks like (has the
   * confusable skeleton of) another registered domain or an operator-protected one. `registered`
   * lists the other domains of the registry with a given skeleton; it is called after the port has
   * serialized look-alike creations, so two look-alikes saved at once cannot both pass. The
   * protected domain itself is not refused; admins may create look-alikes.
   * Contract: test/contract/ownership.contract.ts.
   */
  assertDistinct(tx: Queryable, principal: Principal, domain: string, registered: (skeleton: string) => Promise<string[]>): Promise<void>;
  /**
   * Every organization's current proof (at most the re-proof window old) of any of `domains` (normalized,
   * exact: a proof of `example.com` says nothing of `sub.example.com`), whatever the mode. A read
   * for other features (the brand agent's claim answers); org ids never leave the deployment.
   */
  currentProofs(domains: readonly string[]): Promise<DomainProof[]>;
}

export const Ownership = token<OwnershipPort>('registry.ownership');
