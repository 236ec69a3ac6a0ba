import { ProtocolError } from '../../core/errors.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import type { CreativeGeneratorPort, FormatDefinition } from '../../core/ports/creative-generator.ts';
import { isExampleHost, normalizeAgentUrl } from '../../lib/urls.ts';
import type { FormatCatalog } from './catalog.ts';
import type { PreviewLinks } from './preview-links.ts';
import type { CreativeStorePort } from '../../core/ports/creative-store.ts';
import type { FormatIdInput } from './format-id.ts';

/** What the creative tasks share, built once in the plugin's init. */
export interface CreativeContext {
  db: DatabasePort;
  catalog: FormatCatalog;
  /** Stateless preview ids (preview-links.ts). */
  links: PreviewLinks;
  clock: ClockPort;
  /** `agent_url` of this agent's format ids. */
  agentUrl: string;
  /** Base URL this deployment serves previews and generated files from. */
  publicUrl: string;
  generator: CreativeGeneratorPort;
  brands: BrandLookupPort | undefined;
  creativeAgents: { agent_url: string; agent_name?: string; capabilities?: string[] }[];
  pageSize: number;
  previewTtlMs: number;
  /** Whether small `url` previews are sealed links rather than stored rows (preview-links.ts). */
  previewLinks: boolean;
  assetTtlMs: number;
  buildDelayMs: number;
  /** Sandbox: formats seeded by the test controller are listed per account. */
  seeded: boolean;
  /** The creative library served as an ad server, once attached (CreativeLibrary port). */
  library: () => CreativeStorePort | undefined;
}

/** A format a request names, resolved against the catalog, with the size and duration it renders at. */
export interface ResolvedFormat {
  definition: FormatDefinition;
  size?: { width: number; height: number };
  durationMs?: number;
}

export function localFormatIds(agentUrl: string): (f: { agent_url: string }) => boolean {
  const ours = normalizeAgentUrl(agentUrl);
  return (f) => ours !== null && normalizeAgentUrl(f.agent_url) === ours;
}

/**
 * Resolve format ids named in a request (field paths for errors) by their `id`: AdCP 3.1 makes a
 * build target unsupported when its `id` is not one this agent advertises (FORMAT_NOT_SUPPORTED),
 * so a format id naming another agent (the reference creative agent whose catalog this one
 * carries, a seller's copy, a documentation placeholder) is served from this catalog's definition
 * of that id, and answers name this agent's URL. 404 FORMAT_NOT_SUPPORTED for an unknown id;
 * 400 INVALID_FORMAT_ID when its parameters do not fit. Throws at the first failure (callers with
 * per-item errors resolve one at a time).
 */
export async function resolveFormats(
  ctx: CreativeContext,
  refs: readonly { ref: FormatIdInput; field: string }[],
  /** Definitions already read (a batch reads all of its formats at once). */
  known?: ReadonlyMap<string, FormatDefinition>,
  /** The definition to use for a format this catalog lacks, if the caller can stand one in. */
  standIn?: (ref: FormatIdInput) => FormatDefinition | undefined,
): Promise<ResolvedFormat[]> {
  const found = known ?? (await ctx.catalog.find(refs.map((r) => r.ref.id)));
  return refs.map(({ ref, field }) => {
    const definition = found.get(ref.id) ?? standIn?.(ref);
    if (!definition) {
      const elsewhere = localFormatIds(ctx.agentUrl)(ref) ? '' : ` (it names ${ref.agent_url.slice(0, 200)}: ask that agent)`;
      throw new ProtocolError('FORMAT_NOT_SUPPORTED', `${field}: format ${ref.id} is not supported by this agent${elsewhere}`, {
        status: 404,
        field,
        suggestion: 'Call list_creative_formats for the formats this agent supports',
      });
    }
    return { definition, ...parameters(definition, ref, field) };
  });
}

function parameters(format: FormatDefinition, ref: FormatIdInput, field: string): Pick<ResolvedFormat, 'size' | 'durationMs'> {
  const accepts = (format.accepts_parameters as string[] | undefined) ?? [];
  const render = (format.renders?.find((r) => r.role === 'primary') ?? format.renders?.[0]) as { dimensions?: { width?: number; height?: number } } | undefined;
  const fixed = render?.dimensions?.width && render.dimensions.height ? { width: render.dimensions.width, height: render.dimensions.height } : undefined;
  let size = fixed;
  if (ref.width !== undefined && ref.height !== undefined) {
    const same = fixed && fixed.width === ref.width && fixed.height === ref.height;
    if (!accepts.includes('dimensions') && !same) {
      throw new ProtocolError(
        'INVALID_FORMAT_ID',
        `${field}: format ${ref.id} has fixed dimensions${fixed ? ` (${fixed.width}x${fixed.height})` : ''}; send no width/height`,
        { field: `${field}.width` },
      );
    }
    size = { width: ref.width, height: ref.height };
  }
  if (ref.duration_ms !== undefined && !accepts.includes('duration')) {
    throw new ProtocolError('INVALID_FORMAT_ID', `${field}: format ${ref.id} takes no duration_ms parameter`, { field: `${field}.duration_ms` });
  }
  return { ...(size ? { size } : {}), ...(ref.duration_ms !== undefined ? { durationMs: ref.duration_ms } : {}) };
}

const STAND_IN_TYPES: Record<string, string> = { video: 'video', audio: 'audio', vast: 'video', daast: 'audio' };

/**
 * A sandbox's stand-in for a format of an agent under a reserved example name (RFC 2606; test
 * fixtures name the seller's own platform `your-platform.example.com`): the manifest's own assets,
 * each a required slot, so a creative pushed with such a format previews as it was sent. Outside
 * a sandbox, or for a real agent's format, there is none (FORMAT_NOT_SUPPORTED).
 */
export function exampleFormatStandIn(ctx: CreativeContext, assets: Record<string, unknown>): (ref: FormatIdInput) => FormatDefinition | undefined {
  return (ref) => {
    if (!ctx.seeded || !isExampleHost(ref.agent_url)) return undefined;
    const slots = Object.entries(assets).flatMap(([asset_id, a]) => {
      const type = (a as { asset_type?: unknown } | null)?.asset_type;
      return typeof type === 'string' && /^[a-z0-9_]{1,64}$/.test(asset_id)
        ? [{ item_type: 'individual' as const, asset_id, asset_type: type, required: true }]
        : [];
    });
    if (!slots.length) return undefined;
    const media = slots.map((s) => STAND_IN_TYPES[s.asset_type]).find(Boolean);
    const type = media ?? (slots.some((s) => s.asset_type === 'text') ? 'native' : 'display');
    return { format_id: { agent_url: ref.agent_url, id: ref.id }, name: `${ref.id} (sandbox stand-in)`, type, assets: slots };
  };
}

/**
 * Build targets of the seller's own platform under a reserved example name (RFC 2606) in a sandbox:
 * a target this catalog lacks whose id names a display size it has a template for
 * (`display_300x250_catalog` -> `display_300x250`) is built with that template, under the id asked
 * for. Resolves the templates it may need first; outside a sandbox it stands in nothing.
 */
export async function exampleTemplateStandIn(
  ctx: CreativeContext,
  refs: readonly FormatIdInput[],
): Promise<(ref: FormatIdInput) => FormatDefinition | undefined> {
  const templateOf = (ref: FormatIdInput) => {
    const size = /(?:^|_)(\d{2,4}x\d{2,4})(?:_|$)/.exec(ref.id)?.[1];
    return ctx.seeded && isExampleHost(ref.agent_url) && size ? `display_${size}` : undefined;
  };
  const wanted = [...new Set(refs.map(templateOf).filter((id): id is string => id !== undefined))];
  const templates = wanted.length ? await ctx.catalog.find(wanted) : new Map<string, FormatDefinition>();
  return (ref) => {
    const template = templates.get(templateOf(ref) ?? '');
    return template
      ? { ...template, format_id: { agent_url: ref.agent_url, id: ref.id }, name: `${template.name} (sandbox stand-in for ${ref.id})` }
      : undefined;
  };
}
