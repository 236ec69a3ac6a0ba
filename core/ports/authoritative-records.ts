import { token } from '../token.ts';
import type { Queryable } from './database.ts';

/**
 * Where the crawl pipeline records a domain's validated authoritative file, inside its own
 * transaction, so resolution endpoints serve it and community edits of the domain answer 409.
 * Provided by registry-brands (brand.json) and registry-properties (adagents.json); a deployment
 * without them simply skips the step. Recording replaces whatever entry the domain had (a community
 * entry included) and nothing is recorded if the transaction rolls back.
 * Contract: test/contract/authoritative-records.contract.ts.
 */
export interface AuthoritativeRecordsPort {
  record(tx: Queryable, domain: string, document: Record<string, unknown>): Promise<void>;
}

export const BrandJsonRecords = token<AuthoritativeRecordsPort>('registry.brand-json-records');
export const AdagentsRecords = token<AuthoritativeRecordsPort>('registry.adagents-records');
