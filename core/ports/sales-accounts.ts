import { token } from '../token.ts';
import type { Queryable } from './database.ts';

/** A buyer account on this seller: one per (owner, brand, operator, sandbox); `owner` is the calling organization. */
export interface SalesAccount {
  account_id: string;
  owner: string;
  brand_domain: string;
  operator: string;
  billing: string;
  payment_terms: string | null;
  /** The most this account may owe (core/account.json), set by the seller; null: the seller's default. */
  credit_limit: CreditLimit | null;
  sandbox: boolean;
  status: string;
  name: string;
}

export interface CreditLimit {
  amount: number;
  currency: string;
}

/** How a request names an account: `{account_id}` or `{brand: {domain}, operator}` (core/account-ref.json). */
export type SalesAccountRef = { account_id: string } | { brand: { domain: string }; operator: string; sandbox?: boolean };

/**
 * The seller's buyer accounts, for the features that work under one (media buys, creatives, buyer
 * data). Every method runs on the caller's `q`, so what it writes (a sandbox account provisioned on
 * first reference) commits or rolls back with the caller's transaction.
 */
export interface SalesAccountsPort {
  /**
   * The account `ref` names, owned by `owner`. Throws ProtocolError ACCOUNT_NOT_FOUND (404) when there
   * is none, ACCOUNT_SUSPENDED (403) when it is not active, naming `field` (default `account`). On a
   * sandbox deployment a {brand, operator} reference provisions its account on first use.
   */
  resolve(q: Queryable, owner: string, ref: SalesAccountRef, field?: string): Promise<SalesAccount>;
  /** The account `ref` names, owned by `owner`, if it exists (never provisions: a read for other agents' checks). */
  find(q: Queryable, owner: string, ref: SalesAccountRef): Promise<SalesAccount | undefined>;
  /**
   * The sandbox account a test-controller call names (`account` as the request sent it), for a seeded
   * fixture. Throws ScenarioError: INVALID_PARAMS (no usable reference), NOT_FOUND, FORBIDDEN (not sandbox).
   */
  sandboxFixture(q: Queryable, owner: string, account: unknown): Promise<SalesAccount>;
  /** The accounts of these ids, whoever owns them (answers that show the account of stored records). */
  byIds(q: Queryable, ids: readonly string[]): Promise<SalesAccount[]>;
  /** The governance agent the buyer synced for this account (sync_governance), if any: its checks govern the account's buys. */
  governanceAgent(q: Queryable, accountId: string): Promise<AccountGovernanceAgent | undefined>;
}

/** A governance agent synced for an account: where to call it and the credential to present (opened, not sealed). */
export interface AccountGovernanceAgent {
  url: string;
  scheme: string;
  credentials: string;
}

export const SalesAccounts = token<SalesAccountsPort>('sales.accounts');
