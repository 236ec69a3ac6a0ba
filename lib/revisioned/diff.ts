import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { findEntry, type RevisionTables } from './store.ts';

/** One changed leaf between two revisions; `path` names it (`brand_manifest.colors[0].hex`). */
export interface FieldChange {
  path: string;
  change: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

/** At most this many changes in one answer (a replaced property list can touch thousands of leaves). */
export const MAX_CHANGES = 500;

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Leaves of a JSON value by path; empty objects and arrays are leaves themselves, so emptying one shows. */
function leaves(value: unknown, path: string, out: Map<string, unknown>): Map<string, unknown> {
  if (Array.isArray(value) && value.length) {
    for (const [i, x] of value.entries()) leaves(x, `${path}[${i}]`, out);
  } else if (isObject(value) && Object.keys(value).length) {
    for (const [k, x] of Object.entries(value))
      leaves(x, /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? (path ? `${path}.${k}` : k) : `${path}[${JSON.stringify(k)}]`, out);
  } else if (path) out.set(path, value);
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What changed from `before` to `after`, leaf by leaf, in the order the leaves appear (after's first, then removed ones). */
export function diffFields(before: unknown, after: unknown): FieldChange[] {
  const a = leaves(before ?? {}, '', new Map());
  const b = leaves(after ?? {}, '', new Map());
  const out: FieldChange[] = [];
  for (const [path, value] of b) {
    if (!a.has(path)) out.push({ path, change: 'added', after: value });
    else if (!same(a.get(path), value)) out.push({ path, change: 'changed', before: a.get(path), after: value });
  }
  for (const [path, value] of a) if (!b.has(path)) out.push({ path, change: 'removed', before: value });
  return out;
}

/**
 * The field changes between two revisions of an entry (`from` 0 is the empty entry before the first
 * revision); `to` defaults to the current revision and `from` to the one before `to`. Null when the
 * entry is unknown; `missing` names a revision the entry does not have.
 */
export async function revisionDiff(db: Queryable, tables: RevisionTables, domain: string, to?: number, from?: number) {
  const entry = await findEntry(db, tables, domain);
  if (!entry) return null;
  const target = to ?? entry.revision_number;
  const base = from ?? target - 1;
  const wanted = [target, base].filter((n) => n > 0);
  const rows = await db.query<{ revision_number: number; data: unknown; edit_summary: string; editor_name: string; created_at: Date | string }>(sql`
    SELECT revision_number, data, edit_summary, editor_name, created_at FROM ${sql.raw(tables.revisions)}
    WHERE entry_id = ${entry.id}::uuid AND revision_number = ANY(${wanted}::int[])`);
  const byNumber = new Map(rows.map((r) => [r.revision_number, r]));
  const missing = wanted.find((n) => !byNumber.has(n));
  if (missing !== undefined) return { missing };
  const changes = diffFields(base > 0 ? byNumber.get(base)!.data : {}, byNumber.get(target)!.data);
  const meta = (n: number) => {
    const r = byNumber.get(n);
    return r ? { revision_number: n, edit_summary: r.edit_summary, editor_name: r.editor_name, created_at: new Date(r.created_at).toISOString() } : null;
  };
  return {
    domain,
    from: base,
    to: target,
    from_revision: meta(base),
    to_revision: meta(target)!,
    changes: changes.slice(0, MAX_CHANGES),
    total_changes: changes.length,
    truncated: changes.length > MAX_CHANGES,
  };
}
