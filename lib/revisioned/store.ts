import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Principal } from '../../core/ports/auth.ts';
import { ProtocolError } from '../../core/errors.ts';
import { confusableSkeleton } from '../../lib/confusables.ts';
import { announceChange } from './cache.ts';
import type { OwnershipPort } from '../../core/ports/ownership.ts';

/**
 * Revision-tracked registry entries (brands, hosted properties): one current row per domain plus
 * an append-only revision log. Both plugins share this logic and their own pair of tables, each
 * created with the same shape (see registry-brands/migrations).
 */
export interface RevisionTables {
  /** Current entries: id, domain (unique), source, data, authoritative, owner_org_id, revision_number, timestamps. */
  entries: string;
  /** Revision log: unique (entry_id, revision_number). */
  revisions: string;
  /** Sources whose entries are authoritative and refuse community edits (409). */
  authoritative: readonly string[];
  /** Noun used in messages: `brand`, `property`. */
  noun: string;
}

export interface Entry<D> {
  id: string;
  domain: string;
  source: string;
  data: D;
  authoritative: unknown;
  owner_org_id: string | null;
  revision_number: number;
  created_at: string;
  updated_at: string;
}

export interface SaveOutcome<D> {
  created: boolean;
  entry: Entry<D>;
  /** The data before this save (undefined on create). */
  previous?: D;
}

export interface Editor {
  /** Who edits; null is the registry itself (automated enrichment: editor `system`, no owning organization, no proof). */
  principal: Principal | null;
  /** Save-time anti-abuse controls (proof of control, look-alikes), when the deployment has them (registry-ownership). */
  ownership?: OwnershipPort;
  summary: string;
  now: Date;
  newId: () => string;
  /** Only entries of these sources may be revised by this save (an existing entry of another source: CONFLICT). */
  replaceable?: readonly string[];
}

const t = (name: string) => sql.raw(name);

/** The editor name of automated edits (enrichment). */
export const SYSTEM_EDITOR = 'system';

function editorName(p: Principal | null): string {
  return p ? (p.userName ?? p.orgName) : SYSTEM_EDITOR;
}

async function lockEntry<D>(tx: Queryable, tables: RevisionTables, domain: string): Promise<Entry<D> | undefined> {
  const [row] = await tx.query<Entry<D>>(sql`
    SELECT id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at
    FROM ${t(tables.entries)} WHERE domain = ${domain}::text FOR UPDATE`);
  return row;
}

function assertEditable(tables: RevisionTables, entry: Entry<unknown>, principal: Principal | null): void {
  if (tables.authoritative.includes(entry.source)) {
    throw new ProtocolError('CONFLICT', `${entry.domain} is an authoritative ${tables.noun} (source ${entry.source}); edit the published file instead`);
  }
  if (principal && entry.owner_org_id && entry.owner_org_id !== principal.orgId && principal.tier !== 'admin') {
    throw new ProtocolError('PERMISSION_DENIED', `${entry.domain} is maintained by another organization`);
  }
}

/** Other domains of the table sharing a confusable skeleton (an index lookup). */
function lookalikes(tx: Queryable, tables: RevisionTables, domain: string) {
  return async (skeleton: string) =>
    (
      await tx.query<{ domain: string }>(sql`
      SELECT domain FROM ${t(tables.entries)} WHERE skeleton = ${skeleton}::text AND domain <> ${domain}::text ORDER BY domain LIMIT 5`)
    ).map((r) => r.domain);
}

async function appendRevision(
  tx: Queryable,
  tables: RevisionTables,
  entry: { id: string; domain: string; revision_number: number; source: string; data: unknown },
  editor: Editor,
  rollback?: number,
): Promise<void> {
  await tx.query(sql`
    INSERT INTO ${t(tables.revisions)}
      (id, entry_id, domain, revision_number, data, source, editor_org_id, editor_name, edit_summary, is_rollback, rolled_back_to, created_at)
    VALUES (${editor.newId()}::uuid, ${entry.id}::uuid, ${entry.domain}::text, ${entry.revision_number}::int, ${entry.data}::jsonb,
            ${entry.source}::text, ${editor.principal?.orgId ?? null}::uuid, ${editorName(editor.principal)}::text, ${editor.summary}::text,
            ${rollback !== undefined}::boolean, ${rollback ?? null}::int, ${editor.now}::timestamptz)`);
}

/**
 * Create or revise a community entry inside `tx`. Concurrent saves of one domain serialize on
 * the row lock, so revision numbers are consecutive with none lost or duplicated.
 */
export async function saveEntry<D>(
  tx: Queryable,
  tables: RevisionTables,
  domain: string,
  build: (previous: D | undefined) => D,
  source: string,
  editor: Editor,
): Promise<SaveOutcome<D>> {
  const id = editor.newId();
  const data = build(undefined);
  const skeleton = confusableSkeleton(domain);
  const inserted = await tx.query<Entry<D>>(sql`
    INSERT INTO ${t(tables.entries)} (id, domain, skeleton, source, data, owner_org_id, revision_number, created_at, updated_at)
    VALUES (${id}::uuid, ${domain}::text, ${skeleton}::text, ${source}::text, ${data}::jsonb, ${editor.principal?.orgId ?? null}::uuid, 1,
            ${editor.now}::timestamptz, ${editor.now}::timestamptz)
    ON CONFLICT (domain) DO NOTHING
    RETURNING id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at`);
  if (inserted[0]) {
    // A refusal below throws, and the insert rolls back with the transaction.
    if (editor.principal) {
      await editor.ownership?.assertDistinct(tx, editor.principal, domain, lookalikes(tx, tables, domain));
      await editor.ownership?.assertProven(tx, editor.principal, domain, 'create');
    }
    await appendRevision(tx, tables, inserted[0], editor);
    await announceChange(tx, tables.entries, domain);
    return { created: true, entry: inserted[0] };
  }
  const current = await lockEntry<D>(tx, tables, domain);
  if (!current) throw new ProtocolError('CONFLICT', `${domain} changed concurrently; retry`, { status: 409 });
  assertEditable(tables, current, editor.principal);
  if (editor.replaceable && !editor.replaceable.includes(current.source)) {
    throw new ProtocolError('CONFLICT', `${domain} already has a ${current.source} ${tables.noun} entry`, { details: { source: current.source } });
  }
  if (editor.principal) await editor.ownership?.assertProven(tx, editor.principal, domain, 'revise');
  const [entry] = await tx.query<Entry<D>>(sql`
    UPDATE ${t(tables.entries)}
    SET data = ${build(current.data)}::jsonb, source = ${source}::text, revision_number = revision_number + 1, updated_at = ${editor.now}::timestamptz,
        owner_org_id = COALESCE(owner_org_id, ${editor.principal?.orgId ?? null}::uuid)
    WHERE id = ${current.id}::uuid
    RETURNING id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at`);
  await appendRevision(tx, tables, entry!, editor);
  await announceChange(tx, tables.entries, domain);
  return { created: false, entry: entry!, previous: current.data };
}

/** Restore the data of revision `to` as a new revision marked `is_rollback`. */
export async function rollbackEntry<D>(tx: Queryable, tables: RevisionTables, domain: string, to: number, editor: Editor): Promise<SaveOutcome<D>> {
  const current = await lockEntry<D>(tx, tables, domain);
  if (!current) throw new ProtocolError('NOT_FOUND', `No ${tables.noun} is registered for ${domain}`);
  assertEditable(tables, current, editor.principal);
  if (editor.principal) await editor.ownership?.assertProven(tx, editor.principal, domain, 'rollback');
  const [target] = await tx.query<{ data: D; source: string }>(sql`
    SELECT data, source FROM ${t(tables.revisions)} WHERE entry_id = ${current.id}::uuid AND revision_number = ${to}::int`);
  if (!target) throw new ProtocolError('NOT_FOUND', `${domain} has no revision ${to}`, { field: 'to_revision' });
  if (to === current.revision_number) throw new ProtocolError('CONFLICT', `Revision ${to} is already the current revision of ${domain}`);
  const [entry] = await tx.query<Entry<D>>(sql`
    UPDATE ${t(tables.entries)}
    SET data = ${target.data}::jsonb, revision_number = revision_number + 1, updated_at = ${editor.now}::timestamptz
    WHERE id = ${current.id}::uuid
    RETURNING id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at`);
  await appendRevision(tx, tables, entry!, editor, to);
  await announceChange(tx, tables.entries, domain);
  return { created: false, entry: entry!, previous: current.data };
}

export async function findEntry<D>(db: Queryable, tables: RevisionTables, domain: string): Promise<Entry<D> | undefined> {
  const [row] = await db.query<Entry<D>>(sql`
    SELECT id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at
    FROM ${t(tables.entries)} WHERE domain = ${domain}::text`);
  return row;
}

export async function findEntries<D>(db: Queryable, tables: RevisionTables, domains: readonly string[]): Promise<Entry<D>[]> {
  if (domains.length === 0) return [];
  return db.query<Entry<D>>(sql`
    SELECT id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at
    FROM ${t(tables.entries)} WHERE domain = ANY(${domains}::text[])`);
}

export interface RevisionRecord {
  revision_number: number;
  editor_name: string;
  edit_summary: string;
  source: string;
  is_rollback: boolean;
  rolled_back_to?: number;
  created_at: string;
}

/** History response, newest first; null when the domain has no entry. */
export async function history(db: Queryable, tables: RevisionTables, domain: string, limit: number, offset: number) {
  const entry = await findEntry(db, tables, domain);
  if (!entry) return null;
  const [{ total } = { total: 0 }] = await db.query<{ total: number }>(sql`
    SELECT count(*)::int AS total FROM ${t(tables.revisions)} WHERE entry_id = ${entry.id}::uuid`);
  const rows = await db.query<any>(sql`
    SELECT revision_number, editor_name, edit_summary, source, is_rollback, rolled_back_to, created_at
    FROM ${t(tables.revisions)} WHERE entry_id = ${entry.id}::uuid
    ORDER BY revision_number DESC LIMIT ${limit}::int OFFSET ${offset}::int`);
  const revisions: RevisionRecord[] = rows.map((r) => ({
    revision_number: r.revision_number,
    editor_name: r.editor_name,
    edit_summary: r.edit_summary,
    source: r.source,
    is_rollback: r.is_rollback,
    ...(r.is_rollback ? { rolled_back_to: r.rolled_back_to } : {}),
    created_at: new Date(r.created_at).toISOString(),
  }));
  return { domain, total, revisions };
}

/** Version 2 of an entries table: the confusable skeleton, indexed for look-alike checks. */
export function skeletonDdl(entries: string): string {
  return `ALTER TABLE ${entries} ADD COLUMN skeleton text;\nCREATE INDEX ${entries}_skeleton ON ${entries} (skeleton);`;
}

/** Fill skeletons missing from rows (written before version 2, or cleared after a change of the fact table); run at start. */
export async function backfillSkeletons(db: Queryable, tables: RevisionTables): Promise<number> {
  let filled = 0;
  for (;;) {
    const rows = await db.query<{ domain: string }>(sql`SELECT domain FROM ${t(tables.entries)} WHERE skeleton IS NULL LIMIT 1000`);
    if (!rows.length) return filled;
    const domains = rows.map((r) => r.domain);
    await db.query(sql`
      UPDATE ${t(tables.entries)} e SET skeleton = v.skeleton
      FROM unnest(${domains}::text[], ${domains.map(confusableSkeleton)}::text[]) AS v(domain, skeleton)
      WHERE e.domain = v.domain`);
    filled += rows.length;
  }
}

/** Version 3: clear skeletons so start-up recomputes them with the current fact table. */
export function skeletonResetDdl(entries: string): string {
  return `UPDATE ${entries} SET skeleton = NULL;`;
}

/** SQL creating an entries/revisions pair; each plugin's migration calls it with its names. */
export function revisionTablesDdl(entries: string, revisions: string): string {
  return `
CREATE TABLE ${entries} (
  id uuid PRIMARY KEY,
  domain text NOT NULL UNIQUE,
  source text NOT NULL,
  -- the current editable record, as saved (validated at the edge)
  data jsonb NOT NULL,
  -- raw authoritative document (brand.json / adagents.json) when the entry is backed by one
  authoritative jsonb,
  owner_org_id uuid,
  revision_number int NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE TABLE ${revisions} (
  id uuid PRIMARY KEY,
  entry_id uuid NOT NULL REFERENCES ${entries} (id) ON DELETE CASCADE,
  domain text NOT NULL,
  revision_number int NOT NULL,
  data jsonb NOT NULL,
  source text NOT NULL,
  editor_org_id uuid,
  editor_name text NOT NULL,
  edit_summary text NOT NULL,
  is_rollback boolean NOT NULL DEFAULT false,
  rolled_back_to int,
  created_at timestamptz NOT NULL,
  UNIQUE (entry_id, revision_number),
  CHECK (is_rollback = (rolled_back_to IS NOT NULL))
);`;
}

/**
 * Record an authoritative document (crawled brand.json / adagents.json) for a domain. The entry
 * becomes authoritative: community saves answer 409. Authoritative data is not revisioned.
 */
export async function recordAuthoritative<D>(
  tx: Queryable,
  tables: RevisionTables,
  domain: string,
  input: { source: string; data: D; document: unknown; id: string; now: Date },
): Promise<{ created: boolean; entry: Entry<D> }> {
  const rows = await tx.query<Entry<D> & { inserted: boolean }>(sql`
    INSERT INTO ${t(tables.entries)} AS e (id, domain, skeleton, source, data, authoritative, revision_number, created_at, updated_at)
    VALUES (${input.id}::uuid, ${domain}::text, ${confusableSkeleton(domain)}::text, ${input.source}::text, ${input.data}::jsonb, ${input.document}::jsonb, 0,
            ${input.now}::timestamptz, ${input.now}::timestamptz)
    ON CONFLICT (domain) DO UPDATE
      SET source = EXCLUDED.source, data = EXCLUDED.data, authoritative = EXCLUDED.authoritative, updated_at = EXCLUDED.updated_at
    RETURNING id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at,
              (xmax = 0) AS inserted`);
  await announceChange(tx, tables.entries, domain);
  const { inserted, ...entry } = rows[0]!;
  return { created: inserted, entry: entry as Entry<D> };
}
