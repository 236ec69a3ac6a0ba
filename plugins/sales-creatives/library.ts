import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { CreativeUpload, PreparedCreative } from '../../core/ports/seller-creatives.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
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

/** Upsert creatives into the account's library; returns each one's action. */
export async function writeCreatives(
  tx: Queryable,
  owner: string,
  accountId: string,
  prepared: readonly PreparedCreative[],
  now: Date,
): Promise<Map<string, 'created' | 'updated' | 'unchanged'>> {
  const actions = new Map<string, 'created' | 'updated' | 'unchanged'>();
  for (const p of prepared) {
    const c = p.input;
    const tags = c.tags ?? [];
    const [old] = await tx.query<{ name: string; format_key: string; assets: unknown; tags: string[] }>(sql`
      SELECT name, format_key, assets, tags FROM sales_creatives WHERE account_id = ${accountId}::text AND creative_id = ${c.creative_id}::text FOR UPDATE`);
    if (!old) {
      await tx.query(sql`
        INSERT INTO sales_creatives (account_id, creative_id, owner, name, format_id, format_key, assets, tags, status, created_at, updated_at)
        VALUES (${accountId}::text, ${c.creative_id}::text, ${owner}::text, ${c.name}::text, ${p.format}::jsonb, ${p.key}::text, ${c.assets}::jsonb,
                ${tags}::text[], 'approved', ${now}::timestamptz, ${now}::timestamptz)`);
      actions.set(c.creative_id, 'created');
      continue;
    }
    const same =
      old.name === c.name &&
      old.format_key === p.key &&
      canonicalJson(old.assets) === canonicalJson(c.assets) &&
      canonicalJson(old.tags) === canonicalJson(tags);
    if (!same) {
      await tx.query(sql`UPDATE sales_creatives SET name = ${c.name}::text, format_id = ${p.format}::jsonb, format_key = ${p.key}::text, assets = ${c.assets}::jsonb,
        tags = ${tags}::text[], updated_at = ${now}::timestamptz WHERE account_id = ${accountId}::text AND creative_id = ${c.creative_id}::text`);
    }
    actions.set(c.creative_id, same ? 'unchanged' : 'updated');
  }
  return actions;
}

/** Format keys of the account's library creatives among `creativeIds`. */
export async function formatKeys(q: Queryable, accountId: string, creativeIds: readonly string[]): Promise<Map<string, string>> {
  if (!creativeIds.length) return new Map();
  const rows = await q.query<{ creative_id: string; format_key: string }>(sql`SELECT creative_id, format_key FROM sales_creatives
    WHERE account_id = ${accountId}::text AND creative_id = ANY(${[...creativeIds]}::text[])`);
  return new Map(rows.map((r) => [r.creative_id, r.format_key]));
}
