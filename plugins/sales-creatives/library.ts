import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { CreativeUpload, PreparedCreative } from '../../core/ports/seller-creatives.ts';
import { formatKey, structuredFormatId } from '../../lib/adcp/format-ids.ts';
import type { CreativesDeps } from './deps.ts';

function checkAssetUrls(c: CreativeUpload, field: string): void {
  for (const [name, asset] of Object.entries(c.assets)) {
    const url = (asset as { url?: unknown }).url;
    if (url === undefined) continue;
    if (typeof url !== 'string' || url.length > 2048 || !/^https?:\/\/[^\s]+$/i.test(url) || !URL.canParse(url)) {
      throw new ProtocolError('INVALID_REQUEST', `${field}.assets.${name}.url: must be an absolute http(s) URL`, { field: `${field}.assets.${name}.url` });
    }
  }
}

/**
 * Validate creatives before anything is written: structured format ids (INVALID_FORMAT_ID),
 * defined by the creative agent their `agent_url` names (asked through the port or the network),
 * asset URLs http(s). Throws on the first problem, naming its field.
 */
export async function prepareCreatives(deps: Pick<CreativesDeps, 'formats'>, creatives: readonly CreativeUpload[], field: string): Promise<PreparedCreative[]> {
  const prepared = creatives.map((c, i) => {
    const format = structuredFormatId(c.format_id, `${field}[${i}].format_id`);
    checkAssetUrls(c, `${field}[${i}]`);
    return { input: c, format, key: formatKey(format) };
  });
  const ids = prepared.map((p) => p.input.creative_id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw new ProtocolError('INVALID_REQUEST', `${field}: creative_id ${dup} appears twice`, { field });
  const known = await deps.formats.check(prepared.map((p) => p.format));
  prepared.forEach((p, i) => {
    if (!known.get(p.key)) {
      throw new ProtocolError('INVALID_FORMAT_ID', `${field}[${i}].format_id: ${p.format.id} is not a format of the creative agent ${p.format.agent_url}`, {
        field: `${field}[${i}].format_id`,
        suggestion: "Use a format listed by that agent's list_creative_formats",
      });
    }
  });
  return prepared;
}

function libraryRows(prepared: readonly PreparedCreative[]) {
  return prepared.map((p) => ({
    creative_id: p.input.creative_id,
    name: p.input.name,
    format_id: p.format,
    format_key: p.key,
    assets: p.input.assets,
    tags: p.input.tags ?? [],
  }));
}

/**
 * Insert creatives new to the account's library in one statement, as writeCreatives would (each one's
 * action `created`): one already there fails it with a unique violation (SQLSTATE 23505), aborting the transaction.
 */
export function insertNewCreatives(tx: Queryable, owner: string, accountId: string, prepared: readonly PreparedCreative[], now: Date): Promise<unknown> {
  return tx.query(sql`
    INSERT INTO sales_creatives (account_id, creative_id, owner, name, format_id, format_key, assets, tags, status, created_at, updated_at)
    SELECT ${accountId}::text, x.creative_id, ${owner}::text, x.name, x.format_id, x.format_key, x.assets, x.tags, 'approved', ${now}::timestamptz, ${now}::timestamptz
    FROM jsonb_to_recordset(${libraryRows(prepared)}::jsonb) AS x(creative_id text, name text, format_id jsonb, format_key text, assets jsonb, tags text[])`);
}

/**
 * Upsert creatives into the account's library in one statement; returns each one's action. A creative
 * whose name, format and assets (jsonb equality: member order aside) and tags are unchanged is left as it is
 * (still locked by the upsert, as a concurrent sync of it must wait).
 */
export async function writeCreatives(
  tx: Queryable,
  owner: string,
  accountId: string,
  prepared: readonly PreparedCreative[],
  now: Date,
): Promise<Map<string, 'created' | 'updated' | 'unchanged'>> {
  const rows = libraryRows(prepared);
  // xmax is 0 on a row this statement inserted, the locking transaction's id on one it updated.
  const written = await tx.query<{ creative_id: string; created: boolean }>(sql`
    INSERT INTO sales_creatives AS s (account_id, creative_id, owner, name, format_id, format_key, assets, tags, status, created_at, updated_at)
    SELECT ${accountId}::text, x.creative_id, ${owner}::text, x.name, x.format_id, x.format_key, x.assets, x.tags, 'approved', ${now}::timestamptz, ${now}::timestamptz
    FROM jsonb_to_recordset(${rows}::jsonb) AS x(creative_id text, name text, format_id jsonb, format_key text, assets jsonb, tags text[])
    ON CONFLICT (account_id, creative_id) DO UPDATE SET name = EXCLUDED.name, format_id = EXCLUDED.format_id, format_key = EXCLUDED.format_key,
      assets = EXCLUDED.assets, tags = EXCLUDED.tags, updated_at = EXCLUDED.updated_at
    WHERE (s.name, s.format_key, s.assets, s.tags) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.format_key, EXCLUDED.assets, EXCLUDED.tags)
    RETURNING s.creative_id, (s.xmax = 0) AS created`);
  const actions = new Map<string, 'created' | 'updated' | 'unchanged'>(prepared.map((p) => [p.input.creative_id, 'unchanged']));
  for (const w of written) actions.set(w.creative_id, w.created ? 'created' : 'updated');
  return actions;
}

/** Format keys of the account's library creatives among `creativeIds`. */
export async function formatKeys(q: Queryable, accountId: string, creativeIds: readonly string[]): Promise<Map<string, string>> {
  if (!creativeIds.length) return new Map();
  // One index lookup per id (LATERAL, kept apart by OFFSET 0): a cached generic plan of `creative_id = ANY(...)`
  // may read the whole library of the account (index on account_id alone, creative_id filtered).
  const rows = await q.query<{ creative_id: string; format_key: string }>(sql`SELECT c.creative_id, c.format_key
    FROM unnest(${[...new Set(creativeIds)]}::text[]) AS k(id),
    LATERAL (SELECT creative_id, format_key FROM sales_creatives WHERE account_id = ${accountId}::text AND creative_id = k.id OFFSET 0) c`);
  return new Map(rows.map((r) => [r.creative_id, r.format_key]));
}
