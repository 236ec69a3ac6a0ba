import * as v from 'valibot';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import type { FormatDefinition } from '../../../core/ports/creative-generator.ts';
import { formatIdSchema } from '../format-id.ts';
import { assetSchema, checkAgainstFormat, manifestSchema } from '../manifest.ts';
import type { CreativeContext } from '../context.ts';

const MAX_FORMATS = 500;

/** Every format of the catalog, in listing order (the catalog is small and cached per instance). */
async function allFormats(ctx: CreativeContext): Promise<FormatDefinition[]> {
  return (await ctx.catalog.page({ limit: MAX_FORMATS })).map((f) => f.wire);
}

const wireId = (ctx: CreativeContext, f: FormatDefinition): Json => ({ agent_url: ctx.agentUrl, id: f.format_id.id });
// Generation fills formats whose every asset the generator writes or lays out: fixed-size visual ones.
const generatable = (f: FormatDefinition) => ['display', 'native'].includes(f.type);

/**
 * list_transformers: what build_creative does, as transformers: generation from a brief into the
 * display and native formats, transformation of a complete manifest into another format, and (with a
 * creative library) serving tags of library creatives.
 */
export function listTransformersTask(ctx: CreativeContext) {
  return defineTask({
    name: 'list_transformers',
    description:
      "The agent's transformers (build_creative modes): generation from a brief, adaptation of a manifest, serving tags of library creatives; filter by ids, formats or name.",
    protocol: 'creative',
    input: v.object({
      transformer_ids: v.optional(v.pipe(v.array(v.string('must be a string')), v.minLength(1, 'must not be empty'), v.maxLength(100))),
      input_format_ids: v.optional(v.pipe(v.array(formatIdSchema), v.minLength(1, 'must not be empty'), v.maxLength(100))),
      output_format_ids: v.optional(v.pipe(v.array(formatIdSchema), v.minLength(1, 'must not be empty'), v.maxLength(100))),
      name_search: v.optional(v.pipe(v.string('must be a string'), v.maxLength(200))),
    }),
    async handler({ input }) {
      const formats = await allFormats(ctx);
      const ids = (list: FormatDefinition[]) => list.map((f) => wireId(ctx, f));
      const all: Json[] = [
        {
          transformer_id: 'generate',
          name: 'Generate from a brief',
          metadata: { mode: 'generation', generator: ctx.generator.latency === 'slow' ? 'model' : 'template' },
          input_format_ids: [],
          output_format_ids: ids(formats.filter(generatable)),
        },
        {
          transformer_id: 'adapt',
          name: 'Adapt a complete manifest to another format',
          metadata: { mode: 'transformation' },
          input_format_ids: ids(formats),
          output_format_ids: ids(formats.filter(generatable)),
        },
      ];
      if (ctx.library())
        all.push({
          transformer_id: 'serving_tag',
          name: 'Serving tag of a library creative (HTML, or VAST for video), with impression and click trackers',
          metadata: { mode: 'serving_tag', input: 'creative_id' },
          input_format_ids: [],
          output_format_ids: ids(formats),
        });
      const has = (list: unknown, wanted: readonly { id: string }[] | undefined) =>
        !wanted || (list as Array<{ id: string }>).some((f) => wanted.some((w) => w.id === f.id));
      const search = input.name_search?.toLowerCase();
      const transformers = all.filter(
        (t) =>
          (!input.transformer_ids || input.transformer_ids.includes(t.transformer_id as string)) &&
          (!input.input_format_ids || has(t.input_format_ids, input.input_format_ids)) &&
          has(t.output_format_ids, input.output_format_ids) &&
          (!search || (t.name as string).toLowerCase().includes(search)),
      );
      return { transformers };
    },
  });
}

const target = v.object({
  kind: v.picklist(['canonical', 'product', 'third_party_format'], 'must be canonical, product or third_party_format'),
  id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(2048)),
});

/** The first problem of `manifest` against `format`, or none. */
function violation(format: FormatDefinition, assets: Json): { rule: string; field: string; expected?: string } | null {
  try {
    for (const [id, asset] of Object.entries(assets)) {
      const parsed = v.safeParse(assetSchema, asset);
      if (!parsed.success) return { rule: 'asset_shape', field: `manifest.assets.${id}`, expected: parsed.issues[0].message };
    }
    checkAgainstFormat(format, assets, 'manifest.assets');
    return null;
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return { rule: 'format_requirements', field: error.field ?? 'manifest.assets', expected: error.message };
  }
}

/**
 * validate_input: whether a manifest satisfies formats of this agent (canonical targets: format ids of
 * its catalog), as build_creative and preview_creative would check it. Product and third-party
 * targets are another agent's to judge.
 */
export function validateInputTask(ctx: CreativeContext) {
  return defineTask({
    name: 'validate_input',
    description: "Check a manifest against this agent's formats (targets of kind canonical: format ids) before building or previewing.",
    protocol: 'creative',
    input: v.object({
      manifest: manifestSchema,
      targets: v.optional(
        v.pipe(v.array(target, 'must be an array of targets'), v.minLength(1, 'must not be empty'), v.maxLength(50, 'accepts at most 50 targets')),
      ),
    }),
    async handler({ input }) {
      const manifest = input.manifest as { format_id: { id: string }; assets?: Json };
      const targets = input.targets ?? [{ kind: 'canonical' as const, id: manifest.format_id.id }];
      const found = await ctx.catalog.find(targets.filter((t) => t.kind === 'canonical').map((t) => t.id));
      const results = targets.map((t): Json => {
        const format = t.kind === 'canonical' ? found.get(t.id) : undefined;
        if (t.kind !== 'canonical') return { target: t, result_kind: 'unvalidatable_nondeterministic' };
        if (!format)
          return {
            target: t,
            result_kind: 'validated_fail',
            violations: [{ rule: 'format_unknown', field: 'targets', expected: 'a format id of list_creative_formats' }],
          };
        const problem = violation(format, (manifest.assets ?? {}) as Json);
        return problem ? { target: t, result_kind: 'validated_fail', violations: [problem] } : { target: t, result_kind: 'validated_pass' };
      });
      return { results };
    },
  });
}

const FEATURES = ['asset_count', 'format_known', 'has_clickthrough', 'secure_urls', 'format_requirements_met'] as const;

/**
 * get_creative_features: facts this agent measures deterministically on a manifest (its assets
 * against the catalog's format), no model and no network.
 */
export function creativeFeaturesTask(ctx: CreativeContext) {
  return defineTask({
    name: 'get_creative_features',
    description: `Deterministic features of a creative manifest: ${FEATURES.join(', ')}; feature_ids narrows them.`,
    protocol: 'creative',
    input: v.object({
      creative_manifest: manifestSchema,
      feature_ids: v.optional(v.pipe(v.array(v.picklist(FEATURES, `must be one of ${FEATURES.join(', ')}`)), v.minLength(1, 'must not be empty'))),
    }),
    async handler({ input, clock }) {
      const manifest = input.creative_manifest as { format_id: { id: string }; assets?: Json };
      const assets = (manifest.assets ?? {}) as Record<string, { url?: unknown; asset_type?: unknown; url_type?: unknown }>;
      const format = (await ctx.catalog.find([manifest.format_id.id])).get(manifest.format_id.id);
      const urls = Object.values(assets).flatMap((a) => (typeof a.url === 'string' ? [a.url] : []));
      const values: Record<(typeof FEATURES)[number], boolean | number> = {
        asset_count: Object.keys(assets).length,
        format_known: !!format,
        has_clickthrough: Object.values(assets).some((a) => a.asset_type === 'url' && a.url_type !== 'tracker_pixel' && a.url_type !== 'tracker_script'),
        secure_urls: urls.every((u) => u.startsWith('https://')),
        format_requirements_met: !!format && !violation(format, assets as Json),
      };
      const measured = clock.now().toISOString();
      return {
        results: (input.feature_ids ?? FEATURES).map((id) => ({ feature_id: id, value: values[id], measured_at: measured, methodology_version: '1' })),
      };
    },
  });
}
