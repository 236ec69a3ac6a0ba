import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { Principal } from '../../core/ports/auth.ts';
import { insertAccount, newAccount, type AccountsDeps } from './store.ts';
import { creditLimit, PAYMENT_TERMS } from './terms.ts';

const id = v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128));
const ACCOUNT_STATUSES = ['active', 'pending_approval', 'rejected', 'payment_required', 'suspended', 'closed'] as const;

async function sandboxAccount(tx: Queryable, principal: Principal, accountId: string) {
  const [a] = await tx.query<{ account_id: string; status: string; sandbox: boolean }>(
    sql`SELECT account_id, status, sandbox FROM sales_accounts WHERE account_id = ${accountId}::text AND owner = ${principal.orgId}::text FOR NO KEY UPDATE`,
  );
  if (!a) throw new ScenarioError('NOT_FOUND', `No account ${accountId} for this caller`, null);
  return a;
}

/** Sandbox scenarios of accounts (comply_test_controller): a test account's status, a test account of a chosen id. */
export function accountScenarios(deps: AccountsDeps): TestScenario[] {
  return [
    defineScenario({
      name: 'force_account_status',
      protocol: 'media_buy',
      // Accounts are served wherever the creative library is (the creative agent's mounts too).
      servedWith: ['creative'],
      description: 'Set the status of a sandbox account',
      params: v.object({ account_id: id, status: v.picklist(ACCOUNT_STATUSES, `must be one of ${ACCOUNT_STATUSES.join(', ')}`) }),
      async run({ params, principal }) {
        return deps.db.transaction(async (tx) => {
          const a = await sandboxAccount(tx, principal, params.account_id);
          if (!a.sandbox && !deps.options.sandbox) throw new ScenarioError('FORBIDDEN', `Account ${a.account_id} is not a sandbox account`, a.status);
          deps.cache?.changing(a.account_id);
          await tx.query(
            sql`UPDATE sales_accounts SET status = ${params.status}::text, updated_at = ${deps.clock.now()}::timestamptz WHERE account_id = ${a.account_id}::text`,
          );
          return { kind: 'transition', previous_state: a.status, current_state: params.status };
        });
      },
    }),
    defineScenario({
      name: 'seed_account',
      protocol: 'media_buy',
      servedWith: ['creative'],
      description:
        'Create a sandbox account of the caller with a chosen account_id: params {account_id, fixture: {brand: {domain}, operator, billing, payment_terms, credit_limit: {amount, currency}}}',
      params: v.object({
        account_id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$')),
        fixture: v.optional(
          v.object({
            brand: v.optional(v.object({ domain: v.pipe(v.string(), v.regex(/^[a-z0-9.-]{1,253}$/, 'must be a lowercase domain name')) })),
            operator: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9.-]{1,253}$/, 'must be a lowercase domain name'))),
            billing: v.optional(v.picklist(['operator', 'agent', 'advertiser'])),
            payment_terms: v.optional(v.picklist(PAYMENT_TERMS, `must be one of ${PAYMENT_TERMS.join(', ')}`)),
            credit_limit: v.optional(creditLimit),
          }),
          {},
        ),
      }),
      async run({ params, principal }) {
        const brand = params.fixture.brand?.domain ?? `${params.account_id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}.example`;
        const operator = params.fixture.operator ?? brand;
        const now = deps.clock.now();
        return deps.db.transaction(async (tx) => {
          const [taken] = await tx.query<{ owner: string }>(sql`SELECT owner FROM sales_accounts WHERE account_id = ${params.account_id}::text
            OR (owner = ${principal.orgId}::text AND brand_domain = ${brand}::text AND operator = ${operator}::text AND sandbox)`);
          if (taken)
            throw new ScenarioError('INVALID_PARAMS', `An account ${params.account_id} (or a sandbox account of ${brand} via ${operator}) exists already`);
          const row = newAccount(deps, principal.orgId, {
            account_id: params.account_id,
            brand_domain: brand,
            operator,
            billing: params.fixture.billing ?? 'operator',
            payment_terms: params.fixture.payment_terms,
            credit_limit: params.fixture.credit_limit,
            sandbox: true,
          });
          await insertAccount(tx, row, now);
          return { kind: 'seed', message: `Sandbox account ${params.account_id} for ${brand}` };
        });
      },
    }),
  ];
}
