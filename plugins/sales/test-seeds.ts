import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { SalesDeps } from './deps.ts';
import { addHistory, insertBuy, newBuy, type BuyStatus } from './buys/store.ts';

const id = v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
const currency = v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'));
const instant = v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 timestamp with a time zone'));
const SEEDABLE_BUY_STATUSES = ['pending_creatives', 'pending_start', 'active', 'paused', 'completed', 'canceled'] as const;

const DAY = 86_400_000;

/**
 * Fixtures of the official storyboards that belong to a buyer (`seed_media_buy`, `seed_creative`):
 * written under the caller's sandbox account, so two callers never see each other's fixtures. A
 * fixture id held by another caller is INVALID_PARAMS; seeding the same id again updates it.
 */
export function salesSeeds(deps: SalesDeps): TestScenario[] {
  return [
    defineScenario({
      name: 'seed_media_buy',
      protocol: 'media_buy',
      description: 'Create a sandbox media buy with a chosen id: params {media_buy_id, fixture: {status, currency, budget: {total}, flight: {start, end}}}',
      params: v.object({
        media_buy_id: id,
        fixture: v.optional(
          v.looseObject({
            status: v.optional(v.picklist(SEEDABLE_BUY_STATUSES, `must be one of ${SEEDABLE_BUY_STATUSES.join(', ')}`), 'active'),
            currency: v.optional(currency),
            budget: v.optional(v.looseObject({ total: v.pipe(v.number(), v.minValue(0)), currency: v.optional(currency) })),
            flight: v.optional(v.looseObject({ start: instant, end: instant })),
          }),
          {},
        ),
      }),
      async run({ params, principal, account }) {
        const fx = params.fixture;
        return deps.db.transaction(async (tx) => {
          const acc = await deps.accounts.sandboxFixture(tx, principal.orgId, account);
          const [taken] = await tx.query<{ owner: string }>(
            sql`SELECT owner FROM sales_media_buys WHERE media_buy_id = ${params.media_buy_id}::text FOR UPDATE`,
          );
          if (taken && taken.owner !== principal.orgId) throw new ScenarioError('INVALID_PARAMS', `Media buy ${params.media_buy_id} belongs to another caller`);
          const now = deps.clock.now();
          const start = fx.flight ? new Date(fx.flight.start) : new Date(now.getTime() - DAY);
          const end = fx.flight ? new Date(fx.flight.end) : new Date(now.getTime() + 30 * DAY);
          if (end <= start) throw new ScenarioError('INVALID_PARAMS', 'fixture.flight: end must be after start');
          const status = fx.status as BuyStatus;
          if (taken) {
            await tx.query(sql`DELETE FROM sales_media_buys WHERE media_buy_id = ${params.media_buy_id}::text`);
          }
          await insertBuy(
            tx,
            newBuy(
              {
                media_buy_id: params.media_buy_id,
                owner: principal.orgId,
                account_id: acc.account_id,
                brand_domain: acc.brand_domain,
                status,
                currency: fx.budget?.currency ?? fx.currency ?? 'USD',
                total_budget: fx.budget?.total ?? 10_000,
                start_time: start,
                end_time: end,
                asap: false,
                sandbox: true,
              },
              now,
            ),
          );
          await addHistory(tx, { mediaBuyId: params.media_buy_id, revision: 1, at: now, actor: 'test controller', action: 'seeded', summary: status });
          return { kind: 'seed', message: `Sandbox media buy ${params.media_buy_id} (${status})` };
        });
      },
    }),
  ];
}
