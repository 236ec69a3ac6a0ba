import type { Json } from '../../core/task.ts';
import type { KindSpec } from './kinds.ts';
import type { ListRow } from './store.ts';

/**
 * A list as property/property-list.json and collection/collection-list.json show it. `account`
 * (account_id form) only to its owner: a seller reading through the list's token does not learn
 * the buyer's account.
 */
export function renderList(spec: KindSpec, r: ListRow, forOwner: boolean): Json {
  const out: Json = { list_id: r.list_id, name: r.name };
  if (r.description !== null) out.description = r.description;
  if (forOwner) out.account = { account_id: r.account_id };
  if (r.sources) out[spec.sourcesField] = r.sources;
  if (r.filters) out.filters = r.filters;
  if (r.brand) out.brand = r.brand;
  if (r.webhook_url && forOwner) out.webhook_url = r.webhook_url;
  out.cache_duration_hours = spec.cacheHours;
  out.created_at = r.created_at.toISOString();
  out.updated_at = r.updated_at.toISOString();
  out[spec.countField] = r.resolved_count;
  return out;
}

/** When a resolution made at `at` should be fetched again. */
export function cacheValidUntil(spec: KindSpec, at: Date): string {
  return new Date(at.getTime() + spec.cacheHours * 3_600_000).toISOString();
}
