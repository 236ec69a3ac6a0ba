import type { DatabasePort } from '../../core/ports/database.ts';
import type { GovernancePort } from '../../core/ports/governance.ts';
import type { WebhookOutboxPort } from '../../core/ports/webhook-outbox.ts';
import type { Right } from './catalog.ts';
import type { SalesAccountsPort } from '../../core/ports/sales-accounts.ts';

/** What the rights tasks use; the optional ports change what they can do, never whether they run. */
export interface RightsDeps {
  db: DatabasePort;
  /** The licensable rights of the brands this agent represents. */
  catalog: readonly Right[];
  /** Consulted before a governed account acquires rights; without it a governed account cannot acquire. */
  governance?: GovernancePort;
  /** The seller's accounts of this deployment: their sync_governance record says which accounts are governed. */
  accounts?: SalesAccountsPort;
  /** Revocation notifications; without it revocations are recorded but not pushed. */
  outbox?: WebhookOutboxPort;
  /** How long the (sandbox) rights holder takes to approve a right with approval_required. */
  approvalDelaySeconds: number;
  /** This agent's public URL (rights_constraint.rights_agent.url, governance `caller`). */
  agentUrl: string;
}
