import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { Logger } from '../../core/log.ts';
import type { FormatDefinition } from '../../core/ports/creative-generator.ts';
import { CatalogSnapshot } from '../../lib/catalog-snapshot.ts';
import { CATALOG_CHANGES, loadCatalog, toWire, unrollGroups } from './formats.ts';

interface Entry {
  id: string;
  position: number;
  type: string;
  lowerName: string;
  assetTypes: readonly string[];
  width: number | null;
  height: number | null;
  responsive: boolean | null;
  /** As list_creative_formats shows it. */
  wire: FormatDefinition;
  /** As the tasks check and render against it (repeatable groups unrolled). */
  definition: FormatDefinition;
}

export interface FormatFilters {
  ids?: readonly string[];
  type?: string;
  assetTypes?: readonly string[];
  maxWidth?: number;
  maxHeight?: number;
  minWidth?: number;
  minHeight?: number;
  responsive?: boolean;
  nameSearch?: string;
  /** Keyset: formats after this (position, id). */
  after?: { position: number; id: string };
  limit: number;
}

const before = (a: { position: number; id: string }, b: { position: number; id: string }) =>
  a.position < b.position || (a.position === b.position && a.id < b.id);

/**
 * The catalog as answered, held by each instance (lib/catalog-snapshot.ts): writers NOTIFY in
 * their transaction (upsertFormats), so every instance reloads it after commit. Listing and
 * lookups are then memory work only. Definitions are shared by every answer: read-only by convention.
 */
export class FormatCatalog {
  private readonly snapshot: CatalogSnapshot<{ entries: Entry[]; byId: Map<string, Entry> }>;

  constructor(
    private readonly db: DatabasePort,
    agentUrl: string,
  ) {
    this.snapshot = new CatalogSnapshot(async () => {
      const entries = (await loadCatalog(db))
        .map((r) => ({
          id: r.id,
          position: r.position,
          type: r.type,
          lowerName: r.name.toLowerCase(),
          assetTypes: r.asset_types,
          width: r.width,
          height: r.height,
          responsive: r.responsive,
          wire: toWire(r.definition, agentUrl),
        }))
        .map((e) => ({ ...e, definition: unrollGroups(e.wire) }))
        .sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
      return { entries, byId: new Map(entries.map((e) => [e.id, e])) };
    }, db.local);
  }

  /** Follow change notifications from every instance; returns the unsubscribe function. */
  follow(logger: Logger): Promise<() => Promise<void>> {
    return this.snapshot.follow(this.db, CATALOG_CHANGES, logger);
  }

  private current() {
    return this.snapshot.get();
  }

  /** One page of the filtered catalog in listing order (position, id). */
  async page(f: FormatFilters): Promise<{ position: number; id: string; wire: FormatDefinition }[]> {
    const { entries } = await this.current();
    const ids = f.ids ? new Set(f.ids) : undefined;
    const term = f.nameSearch?.toLowerCase();
    const out: Entry[] = [];
    for (const e of entries) {
      if (f.after && !before(f.after, e)) continue;
      if (ids && !ids.has(e.id)) continue;
      if (f.type && e.type !== f.type) continue;
      if (f.assetTypes && !f.assetTypes.some((t) => e.assetTypes.includes(t))) continue;
      // Dimension filters match fixed-size formats only ("omit for responsive/fluid formats").
      if (f.maxWidth !== undefined && !(e.width !== null && e.width <= f.maxWidth)) continue;
      if (f.maxHeight !== undefined && !(e.height !== null && e.height <= f.maxHeight)) continue;
      if (f.minWidth !== undefined && !(e.width !== null && e.width >= f.minWidth)) continue;
      if (f.minHeight !== undefined && !(e.height !== null && e.height >= f.minHeight)) continue;
      if (f.responsive !== undefined && e.responsive !== f.responsive) continue;
      if (term && !e.lowerName.includes(term)) continue;
      out.push(e);
      if (out.length >= f.limit) break;
    }
    return out;
  }

  /** Definitions by local id (unknown ids are absent). */
  async find(ids: readonly string[]): Promise<Map<string, FormatDefinition>> {
    return definitions((await this.current()).byId, ids);
  }

  /**
   * As `find`, current as of the call: an id the copy lacks may have been imported on another
   * instance whose announcement has not arrived yet, so the table is asked for the missing ids and,
   * should it hold one, a copy loaded after the call answers. Ids are never removed, so what the copy
   * holds needs no proof.
   */
  async findCurrent(ids: readonly string[]): Promise<Map<string, FormatDefinition>> {
    const copy = await this.current();
    const found = definitions(copy.byId, ids);
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length === 0 || this.snapshot.settled(copy)) return found;
    const known = await this.db.query(sql`SELECT 1 FROM creative_formats WHERE id = ANY(${missing}::text[]) LIMIT 1`);
    return known.length ? definitions((await this.snapshot.refresh()).byId, ids) : found;
  }
}

function definitions(byId: Map<string, Entry>, ids: readonly string[]): Map<string, FormatDefinition> {
  const found = new Map<string, FormatDefinition>();
  for (const id of ids) {
    const e = byId.get(id);
    if (e) found.set(id, e.definition);
  }
  return found;
}
