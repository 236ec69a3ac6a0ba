import * as v from 'valibot';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json, type ResumeContext } from '../../../core/task.ts';
import { GenerationError, type FormatDefinition, type ModelUsage } from '../../../core/ports/creative-generator.ts';
import { accountOf, buildVariantId, recordVariants, type BuildVariant } from '../build-variants.ts';
import type { AccountRef } from '../../../lib/adcp/request-fields.ts';
import type { BrandIdentity } from '../../../core/ports/brand-lookup.ts';
import { domainSchema } from '../../../lib/domain.ts';
import { formatIdIssueCode, formatIdSchema, type FormatIdInput } from '../format-id.ts';
import { applyMacros, assetSchema, checkAgainstFormat, macroName, macroValue, manifestSchema } from '../manifest.ts';
import { extractBrief, mergeBrand, type Brief } from '../brief.ts';
import { exampleTemplateStandIn, resolveFormats, type CreativeContext } from '../context.ts';
import { HostedFiles, storeHostedFiles } from '../hosted-assets.ts';
import { DOMAIN_PATTERN } from '../../../lib/adcp/patterns.ts';
import { isVideo, libraryCreative, servingTag, VAST_TARGET } from '../serving-tags.ts';

const hex6 = v.optional(v.pipe(v.string(), v.regex(/^#[0-9a-fA-F]{6}$/, 'must be #RRGGBB')));

export const buildInput = v.pipe(
  v.object({
    target_format_id: v.optional(formatIdSchema),
    target_format_ids: v.optional(
      v.pipe(v.array(formatIdSchema, 'must be an array of format ids'), v.minLength(1, 'must not be empty'), v.maxLength(10, 'accepts at most 10 formats')),
    ),
    message: v.optional(v.pipe(v.string('must be a string'), v.maxLength(5000, 'must be at most 5000 characters'))),
    creative_manifest: v.optional(manifestSchema),
    brand: v.optional(
      v.looseObject({
        domain: domainSchema(),
        brand_kit_override: v.optional(v.looseObject({ colors: v.optional(v.looseObject({ primary: hex6, secondary: hex6, accent: hex6 })) })),
      }),
    ),
    // Billing reference (AdCP account-ref); its brand stands in when the request names none.
    account: v.optional(v.looseObject({ brand: v.optional(v.looseObject({ domain: domainSchema() })) })),
    quality: v.optional(v.picklist(['draft', 'production'], 'must be draft or production')),
    macro_values: v.optional(v.record(macroName, macroValue)),
    // Ad server: a serving tag for a creative of the caller's library, in this placement.
    creative_id: v.optional(v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(128, 'must be at most 128 characters'))),
    media_buy_id: v.optional(v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(128, 'must be at most 128 characters'))),
    package_id: v.optional(v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(128, 'must be at most 128 characters'))),
  }),
  // AdCP calls the two mutually exclusive, but only 3.1 schemas enforce it: a 3.0 request may carry
  // both (the official runner's does), and then the list governs (a multi-format build).
  v.forward(
    v.check((i) => i.target_format_id !== undefined || i.target_format_ids !== undefined, 'send target_format_id or target_format_ids'),
    // Named on the array: a missing target is a bad request, not a bad format id.
    ['target_format_ids'],
  ),
);
type BuildInput = v.InferOutput<typeof buildInput>;

/** What an asynchronous build keeps between steps (task state: JSON only). */
interface BuildPlan {
  mode: 'generation' | 'transformation';
  targets: { ref: FormatIdInput; field: string }[];
  multi: boolean;
  seeds: Record<string, Json>;
  brief: Brief;
  macroValues?: Record<string, string>;
  /** Who the produced creatives (build variants) belong to: the caller's organization, the account the build named. */
  owner: string;
  account: AccountRef | null;
}

// Generation inputs travel in the manifest but are not creative assets.
const BRIEF_ASSETS = new Set(['brief', 'catalog']);

/** A 3.1 `brand` block for the manifest: previews render in these colours. */
function brandRef(brand: BrandIdentity | undefined): Json | undefined {
  if (!brand?.domain || !DOMAIN_PATTERN.test(brand.domain)) return undefined;
  const colors = Object.fromEntries(Object.entries(brand.colors).filter(([, c]) => c && /^#[0-9a-fA-F]{6}$/.test(c)));
  return { domain: brand.domain, ...(Object.keys(colors).length ? { brand_kit_override: { colors } } : {}) };
}

/** A generator that cannot produce an asset: 422 naming it (other errors pass through). */
function generationFailure(error: unknown, field: string, format: FormatDefinition): unknown {
  if (!(error instanceof GenerationError)) return error;
  const at = error.assetId === 'brand' ? 'brand' : `creative_manifest.assets.${error.assetId}`;
  return new ProtocolError('VALIDATION_ERROR', `${field}: ${error.message}`, {
    status: 422,
    field: at,
    suggestion: error.suggestion,
    details: { format_id: format.format_id.id, asset_id: error.assetId },
  });
}

async function runBuild(
  ctx: CreativeContext,
  plan: BuildPlan,
  brand: BrandIdentity | undefined,
  scope: string,
  onTarget?: (index: number, total: number, format: FormatDefinition) => Promise<void>,
): Promise<Json> {
  const targets = await resolveFormats(
    ctx,
    plan.targets,
    undefined,
    await exampleTemplateStandIn(
      ctx,
      plan.targets.map((t) => t.ref),
    ),
  );
  const files = new HostedFiles(ctx.publicUrl, scope);
  const manifests: Json[] = [];
  const leaves: BuildVariant[] = [];
  for (const [i, target] of targets.entries()) {
    await onTarget?.(i, targets.length, target.definition);
    const { field } = plan.targets[i]!;
    let assets: Json;
    let usage: ModelUsage | undefined;
    try {
      ({ assets, usage } = await ctx.generator.generate({
        mode: plan.mode,
        format: target.definition,
        size: target.size,
        durationMs: target.durationMs,
        message: plan.brief.message,
        brand,
        offerings: plan.brief.offerings,
        headline: plan.brief.headline,
        cta: plan.brief.cta,
        seeds: plan.seeds,
        host: files.host,
      }));
    } catch (error) {
      throw generationFailure(error, field, target.definition);
    }
    assets = applyMacros(assets, plan.macroValues, 'macro_values');
    // A generator's answer is checked like a caller's manifest: a broken adapter must not hand out broken creatives.
    try {
      for (const asset of Object.values(assets)) v.parse(assetSchema, asset);
      checkAgainstFormat(target.definition, assets, 'assets');
    } catch (error) {
      throw new ProtocolError(
        'SERVICE_UNAVAILABLE',
        `The generator produced an invalid ${target.definition.format_id.id} creative: ${(error as Error).message}`,
        { status: 500, recovery: 'terminal' },
      );
    }
    const { ref } = plan.targets[i]!;
    const formatId: Json = { agent_url: ctx.agentUrl, id: ref.id };
    for (const key of ['width', 'height', 'duration_ms'] as const) if (ref[key] !== undefined) formatId[key] = ref[key];
    const manifest: Json = { format_id: formatId, assets };
    const b = brandRef(brand);
    if (b) manifest.brand = b;
    manifests.push(manifest);
    const leaf = { id: buildVariantId(scope, i), owner: plan.owner, account: plan.account, build_id: scope, position: i, format_id: ref.id };
    leaves.push(usage ? { ...leaf, usage } : leaf);
  }
  let body: Json = plan.multi ? { creative_manifests: manifests } : { creative_manifest: manifests[0] };
  // A build queued before leaves were recorded names no owner: it answers without ids.
  if (plan.owner) {
    await recordVariants(ctx.db, leaves, ctx.clock.now());
    // Each produced creative's leaf id, what report_usage takes as its creative_id (AdCP 3.1 build_variant_id:
    // defined on the single-format answer; a multi-format answer defines none, so each manifest carries its
    // own, as an additional property both versions allow).
    if (plan.multi) body = { creative_manifests: manifests.map((m, i) => ({ ...m, build_variant_id: leaves[i]!.id })) };
    else body.build_variant_id = leaves[0]!.id;
  }
  if (files.files.length) {
    const now = ctx.clock.now();
    const expiresAt = new Date(now.getTime() + ctx.assetTtlMs);
    await storeHostedFiles(ctx.db, files.files, now, expiresAt);
    // Generated files are served until then (AdCP: "when generated asset URLs in the manifest expire").
    body.expires_at = expiresAt.toISOString();
  }
  return body;
}

/** A brand no registry knows, shown by its domain (ads name their advertiser's site where no name is known). */
const unregisteredBrand = (domain: string): BrandIdentity => ({ domain, name: domain, colors: {} });

/** The brief's brand completed by the brand lookup; REFERENCE_NOT_FOUND for a `brand` nobody knows. */
async function resolveBrand(ctx: CreativeContext, brief: Brief): Promise<BrandIdentity | undefined> {
  const domain = brief.lookupDomain!;
  const resolved = await ctx.brands!.resolve(domain);
  if (!resolved && !brief.brand?.name) {
    if (brief.lookupOptional) return unregisteredBrand(domain);
    throw new ProtocolError('REFERENCE_NOT_FOUND', `brand.domain: ${domain} is not known to the brand registry`, {
      status: 404,
      field: 'brand.domain',
      suggestion: 'Register the brand, or send promoted_offerings.brand_manifest',
    });
  }
  return mergeBrand(brief.brand, resolved);
}

/** Validate everything a build can check before it runs; nothing is written on failure. */
async function plan(ctx: CreativeContext, input: BuildInput, owner: string): Promise<BuildPlan> {
  const targets = input.target_format_ids
    ? input.target_format_ids.map((ref, i) => ({ ref, field: `target_format_ids[${i}]` }))
    : [{ ref: input.target_format_id!, field: 'target_format_id' }];
  const resolved = await resolveFormats(
    ctx,
    targets,
    undefined,
    await exampleTemplateStandIn(
      ctx,
      targets.map((t) => t.ref),
    ),
  );
  const manifest = input.creative_manifest;
  // A manifest in one of the target formats seeds a generation; one in another format is transformed.
  const mode = !manifest || targets.some((t) => t.ref.id === manifest.format_id.id) ? 'generation' : 'transformation';
  const { promoted_offerings: _offerings, ...assets } = (manifest?.assets ?? {}) as Record<string, any>;
  if (mode === 'transformation') {
    const [source] = await resolveFormats(ctx, [{ ref: manifest!.format_id, field: 'creative_manifest.format_id' }]);
    checkAgainstFormat(source!.definition, assets, 'creative_manifest.assets');
  }
  const seeds: Record<string, Json> = Object.fromEntries(Object.entries(assets).filter(([, a]) => !BRIEF_ASSETS.has(a.asset_type)));
  const brief = extractBrief(input);
  if (mode === 'generation' && !brief.brand?.name && !brief.lookupDomain) {
    throw new ProtocolError(
      'INVALID_REQUEST',
      'brand: generation needs a brand: send brand {domain}, account {brand: {domain}} or creative_manifest.assets.promoted_offerings.brand_manifest',
      {
        field: 'brand',
        suggestion: 'Add "brand": {"domain": "yourbrand.com"}',
      },
    );
  }
  for (const [i, target] of resolved.entries()) {
    try {
      ctx.generator.preflight?.({
        mode,
        format: target.definition,
        size: target.size,
        durationMs: target.durationMs,
        message: brief.message,
        offerings: brief.offerings,
        headline: brief.headline,
        cta: brief.cta,
        seeds,
      });
    } catch (error) {
      throw generationFailure(error, targets[i]!.field, target.definition);
    }
  }
  if (brief.lookupDomain && !ctx.brands) {
    if (brief.lookupOptional) brief.brand = unregisteredBrand(brief.lookupDomain);
    else if (!brief.brand?.name) {
      throw new ProtocolError('UNSUPPORTED_FEATURE', 'brand.domain: this agent resolves no brands; send promoted_offerings.brand_manifest instead', {
        field: 'brand.domain',
      });
    }
    delete brief.lookupDomain;
  }
  return {
    mode,
    targets,
    multi: !!input.target_format_ids,
    seeds,
    brief,
    ...(input.macro_values ? { macroValues: input.macro_values } : {}),
    owner,
    account: accountOf(input.account),
  };
}

/** build_creative of a library creative: its serving tag (one manifest per target format) for the placement. */
async function buildServingTag(ctx: CreativeContext, input: BuildInput, owner: string, now: Date): Promise<Json> {
  const library = ctx.library();
  if (!library) throw new ProtocolError('UNSUPPORTED_FEATURE', 'creative_id: this creative agent has no creative library', { field: 'creative_id' });
  const creative = await libraryCreative(library, owner, input.creative_id!, input.account);
  const targets = input.target_format_ids ?? [input.target_format_id!];
  const manifests: Json[] = [];
  for (const [i, target] of targets.entries()) {
    const field = input.target_format_ids ? `target_format_ids[${i}]` : 'target_format_id';
    const [known] = await ctx.catalog.find([target.id]).then((m) => [...m.values()]);
    // A tag serves the creative as it is: in its own format, as a VAST tag of a video creative, or in a format of this agent's catalog.
    if (target.id !== creative.format_id.id && !(VAST_TARGET.test(target.id) && isVideo(creative)) && !known)
      throw new ProtocolError(
        'FORMAT_NOT_SUPPORTED',
        `${field}: creative ${creative.creative_id} (${creative.format_id.id}) cannot be served as ${target.id}`,
        {
          status: 422,
          field: `${field}.id`,
          suggestion: `Use ${creative.format_id.id}${isVideo(creative) ? ' or a vast_* format' : ''}`,
        },
      );
    const placement = { media_buy_id: input.media_buy_id, package_id: input.package_id };
    manifests.push(
      await servingTag(ctx.db, { publicUrl: ctx.publicUrl, agentUrl: ctx.agentUrl, now }, owner, creative, { id: target.id, type: known?.type }, placement),
    );
  }
  return input.target_format_ids ? { creative_manifests: manifests } : { creative_manifest: manifests[0]! };
}

export function buildCreativeTask(ctx: CreativeContext) {
  return defineTask({
    name: 'build_creative',
    description:
      'Generate a creative (message, brand {domain} or promoted_offerings, offerings) or transform a complete manifest into target_format_id / target_format_ids. Generation runs as an asynchronous task: submitted, working with progress, completed with creative_manifest(s), each produced creative named by a build_variant_id (the creative_id report_usage takes). With creative_id (and media_buy_id, package_id): the serving tag of a library creative, with impression and click trackers.',
    protocol: 'creative',
    mutating: true,
    errorShape: 'creative',
    inputIssueCode: formatIdIssueCode,
    input: buildInput,
    async handler({ input, principal, idempotency, task, clock }) {
      if (input.creative_id !== undefined) return buildServingTag(ctx, input, principal.orgId, clock.now());
      const p = await plan(ctx, input, principal.orgId);
      // Answered at once unless something slow is involved (AdCP 3.1: the submitted envelope is for
      // builds that "cannot be confirmed before the response"; 3.0.6 build responses have no such
      // branch): a slow generator, a brand registry over the network, or a test agent's delay.
      const async =
        ctx.generator.latency === 'slow' || (!!p.brief.lookupDomain && ctx.brands?.latency === 'slow') || (p.mode === 'generation' && ctx.buildDelayMs > 0);
      if (!async) {
        const brand = p.brief.lookupDomain ? await resolveBrand(ctx, p.brief) : p.brief.brand;
        return runBuild(ctx, p, brand, `${principal.id}\n${idempotency.key}`);
      }
      const step = p.brief.lookupDomain ? 'brand' : 'generate';
      return task.defer({
        status: 'submitted',
        message: `Building ${p.targets.length} creative${p.targets.length > 1 ? 's' : ''}`,
        state: { step, plan: p as unknown as Json },
        runAt: new Date(clock.now().getTime() + (step === 'generate' ? ctx.buildDelayMs : 0)),
      });
    },
    async resume({ state, taskId, clock, progress, reschedule }: ResumeContext) {
      const p = state.plan as unknown as BuildPlan;
      const extra = p.brief.lookupDomain ? 1 : 0;
      const total = p.targets.length + extra;
      if (state.step === 'brand') {
        const brand = await resolveBrand(ctx, p.brief);
        return reschedule({
          state: { ...state, step: 'generate', brand: (brand ?? null) as unknown as Json },
          runAt: new Date(clock.now().getTime() + ctx.buildDelayMs),
          status: 'working',
          message: 'Brand resolved; generating',
          progress: { percentage: Math.round((100 * extra) / (total + 1)), current_step: 'brand_resolved', step_number: 1, total_steps: total },
        });
      }
      const brand = (state.brand as unknown as BrandIdentity | null | undefined) ?? p.brief.brand;
      return runBuild(ctx, p, brand ?? undefined, taskId, (i, n, format) =>
        progress({
          percentage: Math.round((100 * (i + extra)) / (n + extra)),
          current_step: `generating ${format.format_id.id}`,
          step_number: i + extra + 1,
          total_steps: total,
        }),
      );
    },
  });
}
