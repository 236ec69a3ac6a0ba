import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { DeliveryType, ForecastRequest, FormatRef, PricingOption, ProductQuery, RankedProduct } from '../../core/ports/inventory.ts';
import { accountRef, brandRef, date, pagination, versionFields } from '../../lib/adcp/request-fields.ts';
import { listRef, money } from './schemas.ts';
import { structuredFormatIds } from '../../lib/adcp/format-ids.ts';
import type { SalesDeps } from './deps.ts';
import { CHANNELS } from '../../lib/adcp/channels.ts';
import { proposalAnswers, refineProposals, type ProposalAnswer } from './proposal-refine.ts';
import { deferForcedProducts, takeForcedArm } from './forced-arms.ts';
import { expireForcedRead } from '../../lib/adcp/sandbox-directives.ts';
import { listDomains, listEntries } from './list-targeting.ts';
import { packageMinimum } from './buys/packages.ts';
import { declareMembers, JsonPiece, type JsonPart } from '../../lib/prebuilt-json.ts';

const DELIVERY_TYPES = ['guaranteed', 'non_guaranteed'] as const;
const text = (max: number) => v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`));

const refineEntry = v.variant(
  'scope',
  [
    v.object({ scope: v.literal('request'), ask: v.pipe(text(2000), v.minLength(1, 'must not be empty')) }),
    v.object({
      scope: v.literal('product'),
      product_id: v.pipe(text(128), v.minLength(1, 'must not be empty')),
      action: v.optional(v.picklist(['include', 'omit', 'more_like_this'], 'must be include, omit or more_like_this')),
      ask: v.optional(text(2000)),
    }),
    v.object({
      scope: v.literal('proposal'),
      proposal_id: v.pipe(text(128), v.minLength(1)),
      action: v.optional(v.picklist(['include', 'omit', 'finalize'], 'must be include, omit or finalize')),
      ask: v.optional(text(2000)),
    }),
  ],
  'must be {scope: "request", ask}, {scope: "product", product_id, action} or {scope: "proposal", proposal_id}',
);

export const getProductsInput = v.pipe(
  v.object({
    ...versionFields,
    // Required by the schemas; a missing mode is read as `brief`.
    buying_mode: v.optional(v.picklist(['brief', 'wholesale', 'refine'], 'must be brief, wholesale or refine')),
    brief: v.optional(text(5000)),
    refine: v.optional(v.pipe(v.array(refineEntry, 'must be an array'), v.minLength(1, 'must not be empty'), v.maxLength(20, 'accepts at most 20 entries'))),
    brand: v.optional(brandRef),
    account: v.optional(accountRef),
    preferred_delivery_types: v.optional(v.pipe(v.array(v.picklist(DELIVERY_TYPES, 'must be guaranteed or non_guaranteed')), v.minLength(1))),
    filters: v.optional(
      v.object({
        delivery_type: v.optional(v.picklist(DELIVERY_TYPES, 'must be guaranteed or non_guaranteed')),
        channels: v.optional(v.pipe(v.array(v.picklist(CHANNELS, 'must be a channel of the channels enum')), v.minLength(1), v.maxLength(20))),
        countries: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be ISO 3166-1 alpha-2 codes'))), v.minLength(1), v.maxLength(250))),
        format_ids: v.optional(v.pipe(v.array(v.unknown()), v.minLength(1), v.maxLength(50))),
        is_fixed_price: v.optional(v.boolean()),
        pricing_currencies: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be ISO 4217 codes'))), v.minLength(1), v.maxLength(20))),
        start_date: v.optional(date),
        end_date: v.optional(date),
        budget_range: v.optional(v.object({ min: v.optional(money), max: v.optional(money), currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/))) })),
      }),
    ),
    property_list: v.optional(listRef),
    fields: v.optional(v.pipe(v.array(v.string()), v.maxLength(60))),
    pagination,
  }),
  v.forward(
    v.check((i) => (i.buying_mode === 'refine') === (i.refine !== undefined), 'is required with buying_mode "refine" and only allowed with it'),
    ['refine'],
  ),
  // 3.1: finalize is a commit, not a refinement; it is never mixed with other entries.
  v.forward(
    v.check(
      (i) =>
        !i.refine?.some((r) => r.scope === 'proposal' && r.action === 'finalize') || i.refine.every((r) => r.scope === 'proposal' && r.action === 'finalize'),
      'mixes finalize with other entries: finalize in a call of its own, after the refinements',
    ),
    ['refine'],
  ),
  v.forward(
    v.check((i) => !i.filters?.start_date || !i.filters?.end_date || i.filters.start_date <= i.filters.end_date, 'must not be before filters.start_date'),
    ['filters', 'end_date'],
  ),
);

/** How this seller reports (product.reporting_capabilities), from the ad server's abilities. */
export function reportingCapabilities(deps: SalesDeps): Json {
  const r = deps.adServer.reporting;
  return {
    available_reporting_frequencies: [...r.granularities],
    expected_delay_minutes: r.expectedDelayMinutes,
    timezone: r.timezone,
    supports_webhooks: true,
    available_metrics: ['impressions', 'spend', 'clicks', 'ctr', 'conversions', 'conversion_value'],
    date_range_support: 'date_range',
    windowed_pull_granularities: [...r.granularities],
  };
}

/** A product's members that no request changes, serialized once: its JSON up to `"forecast":`, and the values it was made from. */
interface ProductHead {
  from: readonly unknown[];
  piece: JsonPiece;
}

/** Most product heads kept (a catalog's products): past it they are forgotten and serialized again when next answered. */
const MAX_HEADS = 10_000;
const REPORTING_KEY = JsonPiece.text(',"reporting_capabilities":');
const RELEVANCE_KEY = JsonPiece.text(',"brief_relevance":');
const CLOSE = JsonPiece.text('}');
const [OPEN_LIST, COMMA, CLOSE_LIST] = ['[', ',', ']'].map(JsonPiece.text) as [JsonPiece, JsonPiece, JsonPiece];

/**
 * A product as get_products answers it, with its JSON (lib/prebuilt-json.ts). What no request
 * changes is worked out once: the reporting capabilities, the pricing options per list of them (an
 * adapter's values; inventory-db's are its catalog copy's, shared by every product that has them),
 * and the serialized members before the forecast per product, kept while the product's values are
 * the same ones (a catalog copy's are read-only; a reload brings new ones). `generatedAt` is the call's.
 */
function productRenderer(deps: SalesDeps) {
  const pricing = new WeakMap<readonly PricingOption[], Json[]>();
  const heads = new Map<string, ProductHead>();
  let reporting: { value: Json; piece: JsonPiece } | undefined;
  const pricingOf = (options: readonly PricingOption[]): Json[] => {
    const known = pricing.get(options);
    if (known) return known;
    const out: Json[] = options.map((o) => {
      const minimum = packageMinimum(o, deps.options.minPackageBudget);
      return minimum > (o.min_spend_per_package ?? 0) ? { ...o, min_spend_per_package: minimum } : { ...o };
    });
    pricing.set(options, out);
    return out;
  };
  const headOf = (out: Json, p: RankedProduct): JsonPiece => {
    const from = [p.name, p.description, p.publisher_properties, p.channels, p.format_ids, p.delivery_type, p.pricing_options];
    const known = heads.get(p.product_id);
    if (known?.from.every((x, i) => x === from[i])) return known.piece;
    const { forecast: _f, reporting_capabilities: _r, brief_relevance: _b, ...head } = out;
    const piece = JsonPiece.text(`${JSON.stringify(head).slice(0, -1)},"forecast":`);
    if (heads.size >= MAX_HEADS) heads.clear();
    heads.set(p.product_id, { from, piece });
    return piece;
  };
  return (p: RankedProduct, forecast: ForecastRequest, generatedAt: string, parts: JsonPart[]): Json => {
    const f = deps.inventory.forecast(p, forecast);
    reporting ??= { value: reportingCapabilities(deps), piece: JsonPiece.of(reportingCapabilities(deps)) };
    const out: Json = {
      product_id: p.product_id,
      name: p.name,
      description: p.description,
      publisher_properties: p.publisher_properties,
      channels: p.channels,
      format_ids: p.format_ids,
      delivery_type: p.delivery_type,
      pricing_options: pricingOf(p.pricing_options),
      forecast: {
        method: 'estimate',
        currency: f.currency,
        forecast_range_unit: 'spend',
        points: [{ budget: f.budget, metrics: { impressions: f.impressions, clicks: f.clicks } }],
        generated_at: generatedAt,
      },
      reporting_capabilities: reporting.value,
    };
    if (p.brief_relevance) out.brief_relevance = p.brief_relevance;
    parts.push(headOf(out, p), JSON.stringify(out.forecast), REPORTING_KEY, reporting.piece);
    if (p.brief_relevance) parts.push(RELEVANCE_KEY, JSON.stringify(p.brief_relevance));
    parts.push(CLOSE);
    return out;
  };
}

export function getProductsTask(deps: SalesDeps) {
  const renderProduct = productRenderer(deps);
  return defineTask({
    name: 'get_products',
    description:
      'Products for a natural-language brief, ranked by relevance (buying_mode brief), or refined from earlier results (buying_mode refine: include, omit, more_like_this, ask; proposals: revise, omit, finalize), with filters, pricing options, forecasts and cursor pagination. A brief for an account also gets a draft proposal (a media plan to finalize and buy by proposal_id).',
    protocol: 'media_buy',
    input: getProductsInput,
    async handler({ input, principal, task }) {
      const mode = input.buying_mode ?? 'brief';
      if (mode === 'wholesale')
        throw new ProtocolError('UNSUPPORTED_FEATURE', 'This seller has no wholesale feed; use buying_mode brief', { field: 'buying_mode' });
      // Products need no account (capabilities: required_for_products false); a named one must exist.
      const account = input.account ? await deps.accounts.resolve(deps.db, principal.orgId, input.account) : undefined;
      const accountKey = account?.account_id ?? '';
      // A sandbox directive (comply_test_controller force_get_products_arm) answers this call submitted.
      const forced = account?.sandbox ? await takeForcedArm(deps.db, principal.orgId, account.account_id, 'get_products') : undefined;
      if (forced) return deferForcedProducts(task, forced, deps.clock.now());
      const f = input.filters ?? {};
      const formatIds: FormatRef[] | undefined = f.format_ids ? structuredFormatIds(f.format_ids, 'filters.format_ids') : undefined;
      const deliveryTypes: DeliveryType[] | undefined = f.delivery_type ? [f.delivery_type] : input.preferred_delivery_types;
      const query: ProductQuery = {
        brief: input.brief,
        channels: f.channels,
        deliveryTypes,
        countries: f.countries,
        formatIds,
        currencies: f.pricing_currencies,
        fixedPrice: f.is_fixed_price,
        limit: input.pagination?.max_results ?? 20,
        cursor: input.pagination?.cursor,
        viewer: principal.orgId,
        // Only products of the publishers the buyer's property list names (property_list_applied).
        ...(input.property_list
          ? { publisherDomains: listDomains(await listEntries(deps, principal.orgId, 'property', input.property_list, 'property_list')) }
          : {}),
      };
      const applied: Json[] = [];
      let proposals: ProposalAnswer | undefined;
      if (input.refine) {
        proposals = await refineProposals(deps, principal.orgId, accountKey, input.refine);
        // Only proposals named: the answer's products are theirs.
        if (input.refine.every((r) => r.scope === 'proposal') && proposals.productIds.length) query.onlyIds = proposals.productIds;
        const named = input.refine.flatMap((r) => (r.scope === 'product' ? [r.product_id] : []));
        const known = await deps.inventory.get(named, principal.orgId);
        const asks: string[] = [];
        input.refine.forEach((r, i) => {
          if (r.scope === 'proposal') {
            applied.push(proposals!.applied[i]!);
            return;
          }
          if (r.scope === 'request') {
            asks.push(r.ask);
            applied.push({ scope: 'request', status: 'applied', notes: 'Products re-ranked by the ask' });
            return;
          }
          // One entry the seller cannot act on is answered in its refinement_applied slot; the rest still apply.
          if (!known.has(r.product_id)) {
            applied.push({
              scope: 'product',
              product_id: r.product_id,
              status: 'unable',
              notes: 'No such product in this catalog: refine products an earlier get_products returned',
            });
            return;
          }
          const action = r.action ?? 'include';
          if (action === 'omit') query.excludeIds = [...(query.excludeIds ?? []), r.product_id];
          else if (action === 'more_like_this') query.similarTo = [...(query.similarTo ?? []), r.product_id];
          else query.onlyIds = [...(query.onlyIds ?? []), r.product_id];
          if (r.ask) asks.push(r.ask);
          applied.push({ scope: 'product', product_id: r.product_id, status: 'applied', ...(r.ask ? { notes: 'The ask re-ranked the results' } : {}) });
        });
        // `include` keeps the named products; `more_like_this` adds similar ones beside them.
        if (query.onlyIds && query.similarTo) {
          const similar = await deps.inventory.search({ ...query, onlyIds: undefined, brief: undefined, cursor: undefined, limit: 100 });
          query.onlyIds = [...query.onlyIds, ...similar.products.map((p) => p.product_id)];
          query.similarTo = undefined;
        }
        if (asks.length) query.brief = [input.brief, ...asks].filter(Boolean).join(' ');
      }
      const page = await deps.inventory.search(query);
      const flight = {
        start: f.start_date ? new Date(`${f.start_date}T00:00:00Z`) : undefined,
        end: f.end_date ? new Date(`${f.end_date}T00:00:00Z`) : undefined,
      };
      const budget = f.budget_range?.max ?? f.budget_range?.min;
      // A brief's first page for an account comes with a plan built from it (kept for refine and create_media_buy,
      // so a brief without an account stays a pure read); refinements answer the proposals they name.
      if (account && !input.refine && !input.pagination?.cursor)
        proposals = await proposalAnswers(deps, principal.orgId, accountKey, page.products, input.brief, flight.start);
      const missing = (proposals?.productIds ?? []).filter((id) => !page.products.some((p) => p.product_id === id));
      const extra = missing.length ? [...(await deps.inventory.get(missing, principal.orgId)).values()] : [];
      const generatedAt = deps.clock.now().toISOString();
      // The products' JSON from their serialized heads (lib/prebuilt-json.ts).
      const products: JsonPart[] = [OPEN_LIST];
      const body: Json = {
        products: [...page.products, ...extra].map((p, i) => {
          if (i) products.push(COMMA);
          return renderProduct(p, { budget, ...flight }, generatedAt, products);
        }),
        cache_scope: input.account ? 'account' : 'public',
        pagination: {
          has_more: !!page.cursor,
          ...(page.total !== undefined ? { total_count: page.total } : {}),
          ...(page.cursor ? { cursor: page.cursor } : {}),
        },
      };
      if (proposals?.proposals.length) body.proposals = proposals.proposals;
      if (applied.length) body.refinement_applied = applied;
      if (input.property_list) body.property_list_applied = true;
      if (deps.options.sandbox) body.sandbox = true;
      products.push(CLOSE_LIST);
      return declareMembers(body, { products });
    },
    resume: expireForcedRead,
  });
}
