import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import type { FormatDefinition } from '../../core/ports/creative-generator.ts';
import { formatIdSchema } from './format-id.ts';
import { fastVariant } from '../../lib/fast-variant.ts';
import { fastAccept, isPlainInput } from '../../lib/fast-accept.ts';
import { memoized } from '../../lib/memoized.ts';

type Json = Record<string, any>;

/** Limits of one manifest (agent-protocol leaves them to the agent). */
export const MANIFEST_LIMITS = { bytes: 256 * 1024, assets: 100, text: 10_000, markup: 200_000, url: 2048 } as const;

export function isHttpUrl(value: string): boolean {
  return value.length <= MANIFEST_LIMITS.url && judged(value);
}
/**
 * URLs judged: a creative's URLs come back in its previews, syncs and builds, and parsing one (a URL
 * object and four getters) was most of checking a manifest. At most 1024 of at most 2 KB each.
 */
const judged = memoized(1024, (value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !!url.hostname && !url.username && !url.password;
  } catch {
    return false;
  }
});

const httpUrl = v.pipe(v.string('must be a string'), v.check(isHttpUrl, 'must be an absolute http(s) URL'));
const size = v.pipe(
  v.number('must be an integer'),
  v.integer('must be an integer'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(20_000, 'must be at most 20000'),
);
const duration = v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(0, 'must be at least 0'), v.maxValue(3_600_000));
const content = (max: number) => v.pipe(v.string('is required'), v.maxLength(max, `must be at most ${max} characters`));
const tag = (kind: 'vast' | 'daast') =>
  v.pipe(
    v.looseObject({
      asset_type: v.literal(kind),
      delivery_type: v.picklist(['url', 'inline'], 'must be url or inline'),
      url: v.optional(httpUrl),
      content: v.optional(content(MANIFEST_LIMITS.markup)),
    }),
    v.forward(
      v.check((a) => (a.delivery_type === 'url' ? !!a.url : !!a.content), 'is required for this delivery_type'),
      ['url'],
    ),
  );

export const ASSET_TYPES = [
  'image',
  'video',
  'audio',
  'text',
  'markdown',
  'html',
  'css',
  'javascript',
  'vast',
  'daast',
  'url',
  'webhook',
  'brief',
  'catalog',
] as const;

/** One asset of a manifest, by `asset_type` (agent-protocol "Creative manifest"; AdCP asset schemas). */
export const assetSchema = fastVariant(
  v.variant(
    'asset_type',
    [
      v.looseObject({ asset_type: v.literal('image'), url: httpUrl, width: size, height: size, alt_text: v.optional(content(500)) }),
      v.looseObject({ asset_type: v.literal('video'), url: httpUrl, width: v.optional(size), height: v.optional(size), duration_ms: v.optional(duration) }),
      v.looseObject({ asset_type: v.literal('audio'), url: httpUrl, duration_ms: v.optional(duration) }),
      v.looseObject({ asset_type: v.literal('text'), content: content(MANIFEST_LIMITS.text) }),
      v.looseObject({ asset_type: v.literal('markdown'), content: content(MANIFEST_LIMITS.text) }),
      v.looseObject({ asset_type: v.literal('html'), content: content(MANIFEST_LIMITS.markup) }),
      v.looseObject({ asset_type: v.literal('css'), content: content(MANIFEST_LIMITS.markup) }),
      v.looseObject({ asset_type: v.literal('javascript'), content: content(MANIFEST_LIMITS.markup) }),
      tag('vast'),
      tag('daast'),
      // URL assets may carry universal macros (`{CLICK_URL}`): checked as http(s) once macros are applied.
      v.looseObject({
        asset_type: v.literal('url'),
        url: httpUrl,
        url_type: v.optional(v.picklist(['clickthrough', 'tracker_pixel', 'tracker_script'], 'must be clickthrough, tracker_pixel or tracker_script')),
      }),
      v.looseObject({ asset_type: v.literal('webhook'), url: httpUrl }),
      v.looseObject({ asset_type: v.literal('brief') }),
      v.looseObject({ asset_type: v.literal('catalog') }),
    ],
    `must be an asset object with asset_type one of ${ASSET_TYPES.join(', ')}`,
  ),
);

const colors = v.union(
  [
    v.looseObject({ primary: v.optional(v.string()), secondary: v.optional(v.string()), accent: v.optional(v.string()) }),
    v.pipe(v.array(v.looseObject({ hex: v.string(), type: v.optional(v.string()) })), v.maxLength(20)),
  ],
  'must be {primary, secondary} or [{hex, type}]',
);
const hexColor = (c: unknown) => typeof c !== 'string' || /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(c);

/** `promoted_offerings` of a generation manifest (agent-protocol "Creative manifest"). */
export const promotedOfferingsSchema = v.looseObject({
  brand_manifest: v.optional(
    v.looseObject({
      url: v.optional(httpUrl),
      name: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(200))),
      colors: v.optional(
        v.pipe(
          colors,
          v.check((c) => (Array.isArray(c) ? c.every((x) => hexColor(x.hex)) : Object.values(c).every(hexColor)), 'must be #RGB or #RRGGBB colours'),
        ),
      ),
      logo_url: v.optional(httpUrl),
      logos: v.optional(v.pipe(v.array(v.looseObject({ url: httpUrl })), v.maxLength(20))),
    }),
  ),
  inline_offerings: v.optional(
    v.pipe(
      v.array(
        v.looseObject({
          name: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(200)),
          description: v.optional(content(2000)),
          landing_url: v.optional(httpUrl),
          image_url: v.optional(httpUrl),
        }),
      ),
      v.maxLength(50, 'accepts at most 50 offerings'),
    ),
  ),
});

const assetKey = /^[a-z0-9_]{1,64}$/;

/** A creative manifest: `format_id` plus assets keyed by the format's asset ids; `promoted_offerings` for generation. */
const fullManifestSchema = v.pipe(
  v.custom<Json>(
    (m) => !m || typeof m !== 'object' || JSON.stringify(m).length <= MANIFEST_LIMITS.bytes,
    `must be at most ${MANIFEST_LIMITS.bytes} bytes of JSON`,
  ),
  v.looseObject(
    {
      format_id: formatIdSchema,
      assets: v.pipe(
        v.objectWithRest({ promoted_offerings: v.optional(promotedOfferingsSchema) }, assetSchema, 'must be an object of assets keyed by asset id'),
        v.rawCheck(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          const keys = Object.keys(dataset.value);
          const bad = keys.find((k) => !assetKey.test(k));
          if (bad !== undefined) addIssue({ message: `asset ids must match ^[a-z0-9_]{1,64}$ (got ${JSON.stringify(bad.slice(0, 70))})` });
          else if (keys.length > MANIFEST_LIMITS.assets) addIssue({ message: `accepts at most ${MANIFEST_LIMITS.assets} assets` });
        }),
      ),
    },
    'must be an object {format_id, assets}',
  ),
);

// ---- The shortcut for manifests valibot would accept as they are (fastAccept) -------------------
// Each check below is one the schema above makes; anything it does not cover (vast/daast tags,
// promoted_offerings, a manifest that may be too large) answers no and valibot decides.

type Obj = Record<string, unknown>;
const isText = (x: unknown, max: number) => typeof x === 'string' && x.length <= max;
const isInt = (x: unknown, min: number, max: number) => typeof x === 'number' && Number.isInteger(x) && x >= min && x <= max;
const isUrl = (x: unknown) => typeof x === 'string' && isHttpUrl(x);
const isSize = (x: unknown) => isInt(x, 1, 20_000);
const isDuration = (x: unknown) => x === undefined || isInt(x, 0, 3_600_000);
const CONTENT_MAX: Record<string, number> = {
  text: MANIFEST_LIMITS.text,
  markdown: MANIFEST_LIMITS.text,
  html: MANIFEST_LIMITS.markup,
  css: MANIFEST_LIMITS.markup,
  javascript: MANIFEST_LIMITS.markup,
};
const URL_TYPES = new Set(['clickthrough', 'tracker_pixel', 'tracker_script']);

function acceptsAsset(a: unknown): boolean {
  if (!isPlainInput(a)) return false;
  const type = a.asset_type;
  switch (type) {
    case 'image':
      return isUrl(a.url) && isSize(a.width) && isSize(a.height) && (a.alt_text === undefined || isText(a.alt_text, 500));
    case 'video':
      return isUrl(a.url) && (a.width === undefined || isSize(a.width)) && (a.height === undefined || isSize(a.height)) && isDuration(a.duration_ms);
    case 'audio':
      return isUrl(a.url) && isDuration(a.duration_ms);
    case 'url':
      return isUrl(a.url) && (a.url_type === undefined || URL_TYPES.has(a.url_type as string));
    case 'webhook':
      return isUrl(a.url);
    case 'brief':
    case 'catalog':
      return true;
    default:
      return typeof type === 'string' && Object.hasOwn(CONTENT_MAX, type) && isText(a.content, CONTENT_MAX[type]!);
  }
}

const FORMAT_ID = /^[a-zA-Z0-9_-]{1,128}$/;
function acceptsFormatId(f: unknown): boolean {
  if (!isPlainInput(f)) return false;
  const { agent_url: url, id, width, height, duration_ms: ms } = f;
  if (typeof url !== 'string' || url.length > 2048 || !URL.canParse(url)) return false;
  if (typeof id !== 'string' || !FORMAT_ID.test(id)) return false;
  if ((width === undefined) !== (height === undefined) || (width !== undefined && (!isSize(width) || !isSize(height)))) return false;
  return ms === undefined || (typeof ms === 'number' && ms >= 1 && ms <= 3_600_000);
}

/** Whether `x` surely serialises to at most `budget` characters of JSON (each UTF-16 unit escapes to at most 6). */
function fitsJson(x: unknown, budget: { left: number }, depth = 0): boolean {
  if (typeof x === 'string') return (budget.left -= x.length * 6 + 3) >= 0;
  if (typeof x !== 'object' || x === null) return (budget.left -= 25) >= 0;
  if (depth > 64) return false;
  budget.left -= 3;
  if (Array.isArray(x)) {
    for (const item of x) if (!fitsJson(item, budget, depth + 1)) return false;
    return budget.left >= 0;
  }
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    if ((budget.left -= key.length * 6 + 3) < 0 || !fitsJson((x as Obj)[key], budget, depth + 1)) return false;
  }
  return budget.left >= 0;
}

function acceptsManifest(m: unknown): boolean {
  if (!isPlainInput(m) || !acceptsFormatId(m.format_id) || !isPlainInput(m.assets)) return false;
  let n = 0;
  for (const key in m.assets) {
    if (!Object.hasOwn(m.assets, key)) continue;
    if (++n > MANIFEST_LIMITS.assets || key === 'promoted_offerings' || !assetKey.test(key) || !acceptsAsset(m.assets[key])) return false;
  }
  return fitsJson(m, { left: MANIFEST_LIMITS.bytes });
}

/** A creative manifest: `format_id` plus assets keyed by the format's asset ids; `promoted_offerings` for generation. */
export const manifestSchema = fastAccept(fullManifestSchema, acceptsManifest);
/** The schema without the shortcut (tests hold the shortcut to it). */
export const fullManifestSchemaForTests = fullManifestSchema;
export type Manifest = v.InferOutput<typeof manifestSchema>;

/** The wire asset type a slot expects. */
const slotType = (slot: Json) => slot.asset_type as string;

/** Per format definition (the catalog's are shared and read-only): its asset ids, and whether it has repeatable groups. */
const formatFacts = new WeakMap<FormatDefinition, { declared: Set<string>; repeats: boolean }>();
function factsOf(format: FormatDefinition): { declared: Set<string>; repeats: boolean } {
  let facts = formatFacts.get(format);
  if (!facts) {
    facts = { declared: new Set(format.assets.map((s) => s.asset_id)), repeats: format.assets.some((s) => s.repetition) };
    formatFacts.set(format, facts);
  }
  return facts;
}

/** A repetition of a repeatable group is whole: once any of its assets is sent, each required one is. */
function checkRepetitions(format: FormatDefinition, assets: Json, field: string): void {
  const started = new Set(
    format.assets.flatMap((s) => {
      const r = s.repetition as { group: string; index: number } | undefined;
      return r && assets[s.asset_id] !== undefined ? [`${r.group}#${r.index}`] : [];
    }),
  );
  for (const slot of format.assets) {
    const r = slot.repetition as { group: string; index: number; required: boolean } | undefined;
    if (r?.required && started.has(`${r.group}#${r.index}`) && assets[slot.asset_id] === undefined) {
      throw new ProtocolError('VALIDATION_ERROR', `${field}.${slot.asset_id}: repetition ${r.index} of ${r.group} is incomplete without "${slot.asset_id}"`, {
        status: 422,
        field: `${field}.${slot.asset_id}`,
        details: { asset_id: slot.asset_id, asset_type: slotType(slot), format_id: format.format_id.id },
      });
    }
  }
}

/**
 * Check a manifest against its format: every required slot present with the right asset type
 * (422 VALIDATION_ERROR naming the asset), and no asset the format does not declare.
 */
export function checkAgainstFormat(format: FormatDefinition, assets: Json, field: string): void {
  const fid = format.format_id.id;
  for (const slot of format.assets) {
    const asset = assets[slot.asset_id];
    if (asset === undefined) {
      if (slot.required) {
        throw new ProtocolError('VALIDATION_ERROR', `${field}.${slot.asset_id}: format ${fid} requires a ${slotType(slot)} asset "${slot.asset_id}"`, {
          status: 422,
          field: `${field}.${slot.asset_id}`,
          suggestion: `Add assets.${slot.asset_id} ({asset_type: "${slotType(slot)}", ...}); list_creative_formats shows every slot`,
          details: { asset_id: slot.asset_id, asset_type: slotType(slot), format_id: fid },
        });
      }
      continue;
    }
    if (asset.asset_type !== slotType(slot)) {
      throw new ProtocolError('VALIDATION_ERROR', `${field}.${slot.asset_id}: format ${fid} expects a ${slotType(slot)} asset, got ${asset.asset_type}`, {
        status: 422,
        field: `${field}.${slot.asset_id}`,
        details: { asset_id: slot.asset_id, asset_type: slotType(slot), format_id: fid },
      });
    }
  }
  const facts = factsOf(format);
  if (facts.repeats) checkRepetitions(format, assets, field);
  const extra = Object.keys(assets).find((k) => !facts.declared.has(k));
  if (extra !== undefined) {
    throw new ProtocolError('VALIDATION_ERROR', `${field}.${extra}: format ${fid} has no asset "${extra}"`, {
      status: 422,
      field: `${field}.${extra}`,
      suggestion: `Assets of ${fid}: ${[...facts.declared].join(', ')}`,
    });
  }
}

// ---- Macros ---------------------------------------------------------------------------------

const MACRO = /\{([A-Z][A-Z0-9_]{0,63})\}/g;

export const macroName = v.pipe(v.string(), v.regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'macro names match ^[A-Z][A-Z0-9_]{0,63}$'));
// Values are substituted literally into URLs and markup: nothing that can close an attribute or open a tag.
export const macroValue = v.pipe(
  v.string('must be a string'),
  v.maxLength(1000, 'must be at most 1000 characters'),
  v.regex(/^[^<>"'`\\\u0000-\u001f\u007f]*$/, 'must not contain <, >, quotes, backticks, backslashes or control characters'),
);

export const previewInputSchema = v.looseObject({
  name: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(200)),
  macros: v.optional(
    v.pipe(
      v.record(macroName, macroValue),
      v.check((m) => Object.keys(m).length <= 50, 'accepts at most 50 macros'),
    ),
  ),
  context_description: v.optional(content(2000)),
});
export type PreviewInput = v.InferOutput<typeof previewInputSchema>;

const URL_FIELDS: Record<string, string> = { image: 'url', video: 'url', audio: 'url', url: 'url', webhook: 'url', vast: 'url', daast: 'url' };

/**
 * The manifest's assets with `{MACRO}` replaced by the variant's values (literal substitution, as
 * AdCP's macro_values). A substitution that leaves a URL field not an absolute http(s) URL is a
 * 400 naming the macro: a value cannot turn a click-through into `javascript:`.
 */
export function applyMacros(assets: Json, macros: Record<string, string> | undefined, field: string): Json {
  // `field` is where the macro values came from (`inputs[0].macros`, `macro_values`).
  if (!macros || Object.keys(macros).length === 0) return assets;
  const used = new Set<string>();
  const sub = (text: string) =>
    text.replace(MACRO, (whole, name: string) => {
      if (!(name in macros)) return whole;
      used.add(name);
      return macros[name]!;
    });
  const out: Json = {};
  for (const [key, asset] of Object.entries(assets)) {
    const next: Json = { ...asset };
    for (const member of ['url', 'content'] as const) {
      if (typeof next[member] !== 'string') continue;
      used.clear();
      next[member] = sub(next[member]);
      if (member === URL_FIELDS[asset.asset_type] && used.size && !isHttpUrl(next[member])) {
        const name = [...used][0]!;
        throw new ProtocolError('INVALID_REQUEST', `${field}.${name}: makes assets.${key}.url not an absolute http(s) URL`, { field: `${field}.${name}` });
      }
    }
    out[key] = next;
  }
  return out;
}
