import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { parseOrThrow } from '../../core/validation.ts';
import { invalid } from '../../core/errors.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { FormatDefinition } from '../../core/ports/creative-generator.ts';
import { ASSET_TYPES } from './manifest.ts';

type Json = Record<string, any>;

export const FORMAT_TYPES = ['display', 'video', 'audio', 'dooh', 'native'] as const;

/** Asset types a format slot may declare (the AdCP set, plus `pixel_tracker` of the reference catalog). */
export const SLOT_TYPES = [...ASSET_TYPES, 'pixel_tracker'] as const;

const assetId = v.pipe(v.string(), v.regex(/^[a-z0-9_]{1,64}$/, 'must match ^[a-z0-9_]{1,64}$'));
const slotType = v.picklist(SLOT_TYPES, `must be one of ${SLOT_TYPES.join(', ')}`);
const count = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(50));

/** A format slot: one asset, or a repeatable group of assets (carousels, slideshows: `{group}_{i}_{asset}` in manifests). */
const slot = v.variant(
  'item_type',
  [
    v.looseObject({
      item_type: v.literal('individual'),
      asset_id: assetId,
      asset_type: slotType,
      required: v.boolean('must be true or false'),
      requirements: v.optional(v.record(v.string(), v.unknown())),
    }),
    v.pipe(
      v.looseObject({
        item_type: v.literal('repeatable_group'),
        asset_group_id: assetId,
        required: v.optional(v.boolean('must be true or false'), true),
        min_count: count,
        max_count: v.pipe(count, v.minValue(1)),
        assets: v.pipe(
          v.array(
            v.looseObject({
              asset_id: assetId,
              asset_type: slotType,
              required: v.optional(v.boolean(), true),
              requirements: v.optional(v.record(v.string(), v.unknown())),
            }),
          ),
          v.minLength(1, 'must list at least one asset'),
          v.maxLength(20),
        ),
      }),
      v.check((g) => g.min_count <= g.max_count, 'min_count must not exceed max_count'),
    ),
  ],
  'must be an individual asset or a repeatable_group',
);

const dimensions = v.looseObject({
  width: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  height: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

/** One format of a catalog file (the reference file's shape); `format_id.agent_url` is replaced by this agent's URL. */
export const importedFormat = v.looseObject({
  format_id: v.looseObject({
    agent_url: v.optional(v.string()),
    id: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,128}$/, 'must match ^[a-zA-Z0-9_-]{1,128}$')),
  }),
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  description: v.optional(v.pipe(v.string(), v.maxLength(2000))),
  type: v.picklist(FORMAT_TYPES, `must be one of ${FORMAT_TYPES.join(', ')}`),
  renders: v.optional(v.pipe(v.array(v.looseObject({ role: v.optional(v.string()), dimensions: v.optional(dimensions) })), v.maxLength(20))),
  assets: v.pipe(v.array(slot), v.minLength(1, 'must list at least one asset'), v.maxLength(100)),
  supported_macros: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Z][A-Z0-9_]{0,63}$/))), v.maxLength(100))),
  accepts_parameters: v.optional(v.array(v.string())),
});
const formatList = v.pipe(v.array(importedFormat, 'must be an array of formats or {formats: [...]}'), v.maxLength(10_000, 'accepts at most 10000 formats'));

/** Tracker purpose of a reference `pixel_tracker` slot, as `url-asset-requirements.role` names it. */
const TRACKER_ROLE: Record<string, string> = { impression: 'impression_tracker', click: 'click_tracker', viewable_mrc_50: 'viewability_tracker' };

export interface StoredFormat {
  id: string;
  type: string;
  name: string;
  /** Wire definition without `format_id.agent_url`; local output/input ids carry `agent_url: ""`. */
  definition: Json;
  macros: string[];
  assetTypes: string[];
  width: number | null;
  height: number | null;
  /** null: no visual size at all (audio). */
  responsive: boolean | null;
}

/**
 * A catalog entry as stored: the definition in a shape that validates against both AdCP schema
 * versions (3.0.6 and 3.1.19): `pixel_tracker` slots become `url` slots with the tracker role,
 * parameters neither version knows (`pixel_ratio`) are dropped, and `supported_macros` is kept
 * beside the definition (3.0.6 declares it as a oneOf that every standard macro name fails).
 */
export function toStored(raw: v.InferOutput<typeof importedFormat>, sourceAgentUrl: string | undefined): StoredFormat {
  const { supported_macros, format_id, ...rest } = raw as Json & typeof raw;
  const localId = (f: Json) => (f && typeof f === 'object' && typeof f.id === 'string' && f.agent_url === sourceAgentUrl ? { ...f, agent_url: '' } : f);
  const slotOut = (s: Json): Json => {
    if (s.item_type === 'repeatable_group') return { ...s, assets: s.assets.map(slotOut) };
    if (s.asset_type !== 'pixel_tracker') return s;
    const role = TRACKER_ROLE[s.event] ?? 'third_party_tracker';
    return { ...s, asset_type: 'url', requirements: { ...(s.requirements ?? {}), role } };
  };
  const definition: Json = { format_id: { id: format_id.id }, ...rest, assets: raw.assets.map(slotOut) };
  if (Array.isArray(rest.assets_required)) definition.assets_required = rest.assets_required.map(slotOut);
  if (raw.accepts_parameters) {
    const known = raw.accepts_parameters.filter((p) => p === 'dimensions' || p === 'duration');
    if (known.length) definition.accepts_parameters = known;
    else delete definition.accepts_parameters;
    // A template renders at the size or duration its format id carries: say so (AdCP render
    // `parameters_from_format_id`) rather than list no render at all.
    if (known.length && !raw.renders?.length) definition.renders = [{ role: 'primary', parameters_from_format_id: true }];
  }
  for (const key of ['output_format_ids', 'input_format_ids']) if (Array.isArray(rest[key])) definition[key] = rest[key].map(localId);
  const primary = raw.renders?.find((r) => r.role === 'primary') ?? raw.renders?.[0];
  const width = typeof primary?.dimensions?.width === 'number' ? primary.dimensions.width : null;
  const height = typeof primary?.dimensions?.height === 'number' ? primary.dimensions.height : null;
  const flexible = !!(primary?.dimensions as Json | undefined)?.responsive && Object.values((primary!.dimensions as Json).responsive).some(Boolean);
  return {
    id: format_id.id,
    type: raw.type,
    name: raw.name,
    definition,
    macros: supported_macros ?? [],
    // What a buyer filters on: the content slots, not the optional measurement pixels every format has.
    assetTypes: [
      ...new Set(
        raw.assets
          .flatMap((a) => (a.item_type === 'repeatable_group' ? a.assets : [a]))
          .filter((a) => a.asset_type !== 'pixel_tracker')
          .map((a) => a.asset_type),
      ),
    ],
    width,
    height,
    // No fixed pixel size (templates, native, most video) or declared responsive; audio is neither.
    responsive: raw.type === 'audio' ? null : flexible || width === null || height === null,
  };
}

/** The definition as list_creative_formats answers it, under this agent's URL. */
export function toWire(definition: Json, agentUrl: string): FormatDefinition {
  const { format_id, name, type, ...rest } = definition;
  const { agent_url: _stored, ...params } = format_id;
  const out: Json = { format_id: { agent_url: agentUrl, ...params }, name, type, ...rest };
  for (const key of ['output_format_ids', 'input_format_ids']) {
    if (Array.isArray(out[key])) out[key] = out[key].map((f: Json) => (f?.agent_url === '' ? { ...f, agent_url: agentUrl } : f));
  }
  return out as FormatDefinition;
}

/** Parse a catalog file (array or `{formats}`); INVALID_REQUEST names the failing entry and field. */
export function parseCatalog(input: unknown): StoredFormat[] {
  const wrapped = !!input && typeof input === 'object' && !Array.isArray(input);
  const formats = wrapped ? parseOrThrow(v.object({ formats: formatList }), input).formats : parseOrThrow(formatList, input);
  const ids = new Set<string>();
  return formats.map((f, i) => {
    if (ids.has(f.format_id.id)) throw invalid(`[${i}].format_id.id: "${f.format_id.id}" appears twice`, `[${i}].format_id.id`);
    ids.add(f.format_id.id);
    const slotId = (a: (typeof f.assets)[number]) => (a.item_type === 'repeatable_group' ? a.asset_group_id : a.asset_id);
    for (const [j, a] of f.assets.entries()) {
      if (f.assets.findIndex((b) => slotId(b) === slotId(a)) !== j) {
        const at = `[${i}].assets[${j}].${a.item_type === 'repeatable_group' ? 'asset_group_id' : 'asset_id'}`;
        throw invalid(`${at}: "${slotId(a)}" appears twice`, at);
      }
    }
    return toStored(f, f.format_id.agent_url);
  });
}

/**
 * Upsert formats; returns how many were new or changed. `reference` rows (the seed) never replace
 * a vendor's own definition of the same id; `vendor` rows replace anything. New rows go after
 * every existing one; updated rows keep their place in the listing order.
 */
export async function upsertFormats(db: DatabasePort, formats: readonly StoredFormat[], source: 'reference' | 'vendor', now: Date): Promise<number> {
  if (formats.length === 0) return 0;
  const rows = formats.map((f, i) => ({
    id: f.id,
    ord: i,
    type: f.type,
    name: f.name,
    definition: f.definition,
    macros: f.macros,
    asset_types: f.assetTypes,
    width: f.width,
    height: f.height,
    responsive: f.responsive,
  }));
  return db.transaction(async (tx) => {
    const written = await tx.query<{ id: string }>(sql`
      INSERT INTO creative_formats (id, position, source, type, name, definition, macros, asset_types, width, height, responsive, updated_at)
      SELECT r.id, (SELECT coalesce(max(position), 0) FROM creative_formats) + r.ord + 1, ${source}::text, r.type, r.name, r.definition,
             ARRAY(SELECT jsonb_array_elements_text(r.macros)), ARRAY(SELECT jsonb_array_elements_text(r.asset_types)),
             r.width, r.height, r.responsive, ${now}::timestamptz
      FROM jsonb_to_recordset(${rows}::jsonb) AS r(id text, ord int, type text, name text, definition jsonb, macros jsonb, asset_types jsonb, width int, height int, responsive boolean)
      ON CONFLICT (id) DO UPDATE SET
        source = EXCLUDED.source, type = EXCLUDED.type, name = EXCLUDED.name, definition = EXCLUDED.definition, macros = EXCLUDED.macros,
        asset_types = EXCLUDED.asset_types, width = EXCLUDED.width, height = EXCLUDED.height, responsive = EXCLUDED.responsive,
        updated_at = EXCLUDED.updated_at
      WHERE (${source}::text = 'vendor' OR creative_formats.source = 'reference')
        AND (creative_formats.source, creative_formats.definition, creative_formats.macros) IS DISTINCT FROM (EXCLUDED.source, EXCLUDED.definition, EXCLUDED.macros)
      RETURNING id`);
    // Every instance drops its cached catalog when this commits.
    if (written.length) await tx.query(sql`SELECT pg_notify(${CATALOG_CHANGES}::text, '')`);
    return written.length;
  });
}

/** NOTIFY channel announcing catalog writes. */
export const CATALOG_CHANGES = 'creative_formats_changed';

/** One catalog entry with the columns the listing filters on. */
export interface CatalogRow {
  id: string;
  position: number;
  type: string;
  name: string;
  asset_types: string[];
  width: number | null;
  height: number | null;
  responsive: boolean | null;
  definition: Json;
}

export function loadCatalog(db: Queryable): Promise<CatalogRow[]> {
  return db.query<CatalogRow>(sql`
    SELECT id, position, type, name, asset_types, width, height, responsive, definition FROM creative_formats ORDER BY position, id`);
}

export async function countFormats(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM creative_formats`);
  return row!.n;
}

/**
 * The definition the creative tasks work with: each repeatable group unrolled into individual slots
 * named as manifests name them (`product_0_image` ... up to max_count), required for the first
 * min_count repetitions. list_creative_formats shows the groups as defined.
 */
export function unrollGroups(wire: FormatDefinition): FormatDefinition {
  if (!wire.assets.some((s) => (s as Json).item_type === 'repeatable_group')) return wire;
  const assets = wire.assets.flatMap((s) => {
    const g = s as Json;
    if (g.item_type !== 'repeatable_group') return [s];
    return Array.from({ length: g.max_count as number }, (_, i) =>
      (g.assets as Json[]).map((a) => ({
        item_type: 'individual' as const,
        asset_id: `${g.asset_group_id}_${i}_${a.asset_id}`,
        asset_type: a.asset_type as string,
        required: g.required !== false && i < g.min_count && a.required !== false,
        ...(a.requirements ? { requirements: a.requirements } : {}),
        // Which repetition of which group the slot is (previews lay repetitions out side by side).
        repetition: { group: g.asset_group_id as string, index: i, asset_id: a.asset_id as string, required: a.required !== false },
      })),
    ).flat();
  });
  return { ...wire, assets };
}
