import * as v from 'valibot';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Http } from '../../core/http.ts';
import { BrandLookup } from '../../core/ports/brand-lookup.ts';
import { CreativeGenerator, type CreativeGeneratorPort } from '../../core/ports/creative-generator.ts';
import { createModelCopywriter } from './model-copywriter.ts';
import { chatModelFields } from '../../lib/model-chat.ts';
import { seedFormatScenario } from './seeded-formats.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { Tasks } from '../../core/task.ts';
import { parseCatalog, upsertFormats } from './formats.ts';
import { createTemplateGenerator } from './template-generator.ts';
import { createRegistryBrandLookup } from './brand-registry-client.ts';
import { previewRoute, pruneExpired } from './previews.ts';
import { loadLinkKey, PreviewLinks } from './preview-links.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { hostedAssetRoute } from './hosted-assets.ts';
import { listFormatsTask } from './tasks/list-formats.ts';
import { buildCreativeTask } from './tasks/build.ts';
import { previewCreativeTask } from './tasks/preview.ts';
import type { CreativeContext } from './context.ts';
import { FormatCatalog } from './catalog.ts';
import { REFERENCE_CREATIVE_AGENT } from '../../lib/adcp/reference-formats.ts';
import { CreativeFormats } from '../../core/ports/creative-formats.ts';
import { CreativeLibrary, type CreativeStorePort } from '../../core/ports/creative-store.ts';
import { trackerRoute } from './trackers.ts';
import { creativeDeliveryTask } from './tasks/delivery.ts';
import { reportUsageTask } from './tasks/report-usage.ts';
import { creativeFeaturesTask, listTransformersTask, validateInputTask } from './tasks/describe.ts';

export const DEFAULT_SEED = join(import.meta.dir, 'seed.json');
/** This agent's own display templates (plain sizes such as display_300x250, and source_master to adapt from). */
export const TEMPLATE_FORMATS = join(import.meta.dir, 'template-formats.json');
/** Formats this platform hosts under plain ids (video_15s, video_30s), as sellers' product fixtures name them. */
export const PLATFORM_FORMATS = join(import.meta.dir, 'platform-formats.json');

const seconds = (min: number, max: number, fallback: number) => v.optional(v.pipe(v.number(), v.minValue(min), v.maxValue(max)), fallback);

const options = v.object({
  /** Format files upserted at every start, in listing order (a vendor's own definitions of the same ids win); `false`: none. */
  seed: v.optional(v.union([v.string(), v.array(v.string()), v.literal(false)]), [DEFAULT_SEED, TEMPLATE_FORMATS, PLATFORM_FORMATS]),
  /** `agent_url` of this agent's format ids (default: server.publicUrl, else http://localhost:PORT). */
  agentUrl: v.optional(v.pipe(v.string(), v.url('must be an absolute URL'))),
  /** Other creative agents listed in list_creative_formats `creative_agents`. */
  creativeAgents: v.optional(
    v.array(
      v.object({
        agent_url: v.pipe(v.string(), v.url('must be an absolute URL')),
        agent_name: v.optional(v.string()),
        capabilities: v.optional(v.array(v.picklist(['validation', 'assembly', 'generation', 'preview', 'delivery']))),
      }),
    ),
    [],
  ),
  /** A brand registry to resolve `brand: {domain}` (`GET {url}/api/brands/resolve`) when none is in this deployment. */
  brandRegistryUrl: v.optional(v.pipe(v.string(), v.url('must be an absolute URL'))),
  /** http:// registry URLs (loopback tests with the crawler's allowlist); never in production. */
  allowHttpRegistry: v.optional(v.boolean(), false),
  /** Formats per list_creative_formats page when the caller sends no pagination.max_results. */
  pageSize: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 100),
  previewTtlSeconds: seconds(60, 30 * 86_400, 86_400),
  /** Preview URLs carry their preview, sealed (up to ~2 KB; larger ones are stored rows); false: every preview is a stored row. */
  previewLinks: v.optional(v.boolean(), true),
  /** How long generated files (rendered images) are served. */
  assetTtlSeconds: seconds(60, 365 * 86_400, 30 * 86_400),
  /** Extra time an asynchronous build takes before generating (test agents show the working state). */
  buildDelaySeconds: seconds(0, 3600, 0),
  /**
   * An OpenAI-compatible model that writes the copy (headline, body, call to action) the templates lay
   * out; builds then run as asynchronous tasks. Without it, the deterministic template generator writes
   * the copy from the brief. A CreativeGenerator plugin in the deployment wins over both.
   */
  model: v.optional(v.object(chatModelFields({ url: 'CREATIVE_MODEL_URL', model: 'CREATIVE_MODEL' }))),
  /**
   * Serve the creative library of this deployment (the seller's, attached through the CreativeLibrary
   * port) as an ad server: build_creative of a creative_id answers a serving tag with trackers,
   * get_creative_delivery is offered, report_usage takes the library's creatives, capabilities declare creative-ad-server.
   */
  adServer: v.optional(v.boolean(), true),
  /** Expired previews and files are deleted this often (0: never). */
  pruneIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 600_000),
});

/**
 * Creative agent: a format catalog in the database (reference formats + the vendor's imports),
 * `list_creative_formats`, `build_creative` (generation through the CreativeGenerator port, or the
 * built-in template generator; transformation of complete manifests; asynchronous with progress),
 * `preview_creative` (single and batch, URL or HTML) with previews served at `GET /previews/{id}`
 * and generated files at `GET /creative-assets/{id}`.
 */
export default definePlugin({
  name: 'creative',
  provides: [CreativeFormats, CreativeLibrary],
  deps: {
    db: Database,
    clock: Clock,
    tasks: Tasks,
    http: Http,
    brands: optional(BrandLookup),
    generator: optional(CreativeGenerator),
    crawler: optional(Crawler),
    controller: optional(TestController),
    box: SecretBox,
  },
  options,
  env: {
    CREATIVE_AGENT_URL: 'agentUrl',
    BRAND_REGISTRY_URL: 'brandRegistryUrl',
    CREATIVE_MODEL_URL: 'model.baseUrl',
    CREATIVE_MODEL: 'model.model',
    CREATIVE_MODEL_API_KEY: 'model.apiKey',
  },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, tasks, http, brands, generator, crawler, controller, box }, kernel) {
    const { options: o, config } = kernel;
    const base = (config.server.publicUrl ?? `http://localhost:${config.server.port}`).replace(/\/+$/, '');
    let lookup = brands;
    if (o.brandRegistryUrl) {
      if (!crawler) throw new ConfigError('plugins.creative.brandRegistryUrl: needs a crawler in the deployment (crawler-http) for outbound requests');
      // A configured registry URL wins over a registry plugin in the same deployment.
      lookup = createRegistryBrandLookup(crawler, o.brandRegistryUrl, { allowHttp: o.allowHttpRegistry });
    }
    const agentUrl = o.agentUrl ?? base;
    const catalog = new FormatCatalog(db, agentUrl);
    // A sales agent in the same deployment validates format ids against this catalog directly.
    kernel.provide(CreativeFormats, {
      agentUrl,
      // The catalog is seeded with the reference formats, so it answers for their agent too.
      mirrors: [REFERENCE_CREATIVE_AGENT],
      // Current as of the call: a format imported on another instance is accepted at once.
      async find(ids) {
        const found = await catalog.findCurrent(ids);
        return new Map([...found].map(([id, d]) => [id, { id, name: d.name, type: d.type }]));
      },
    });
    let modelWriter: CreativeGeneratorPort | undefined;
    if (o.model && !generator) {
      if (!crawler) throw new ConfigError('plugins.creative.model: needs a crawler in the deployment (crawler-http) for the calls to the model');
      modelWriter = createModelCopywriter(o.model, { crawler, template: createTemplateGenerator() });
    }
    // Preview ids that carry their preview (sealed), readable by every instance of this database.
    const links = new PreviewLinks(() => loadLinkKey(db, box, clock));
    const ctx: CreativeContext = {
      db,
      catalog,
      links,
      clock,
      agentUrl,
      publicUrl: base,
      generator: generator ?? modelWriter ?? createTemplateGenerator(),
      brands: lookup,
      creativeAgents: o.creativeAgents,
      pageSize: o.pageSize,
      previewTtlMs: o.previewTtlSeconds * 1000,
      previewLinks: o.previewLinks,
      assetTtlMs: o.assetTtlSeconds * 1000,
      buildDelayMs: o.buildDelaySeconds * 1000,
      seeded: !!controller,
      library: () => library,
    };
    let library: CreativeStorePort | undefined;
    kernel.provide(CreativeLibrary, {
      attach(store) {
        if (!o.adServer || library) return;
        library = store;
        tasks.add(creativeDeliveryTask(ctx, ctx.library));
        tasks.declareCapability({ protocol: 'creative', specialisms: ['creative-ad-server'], block: { creative: { has_creative_library: true } } });
        http.add(trackerRoute(db, clock));
      },
    });
    controller?.register(seedFormatScenario(db, clock, agentUrl));
    tasks.add(
      listFormatsTask(ctx),
      buildCreativeTask(ctx),
      previewCreativeTask(ctx),
      listTransformersTask(ctx),
      validateInputTask(ctx),
      creativeFeaturesTask(ctx),
      // Usage of the creatives it generates (their build_variant_ids), and of the library's once one is attached.
      reportUsageTask(ctx, ctx.library),
    );
    tasks.declareCapability({
      protocol: 'creative',
      specialisms: ['creative-template', 'creative-generative'],
      block: { creative: { supports_generation: true, supports_transformation: true, has_creative_library: false, supports_compliance: false } },
    });
    http.add(previewRoute(db, clock, catalog, links), hostedAssetRoute(db, clock));
    if (o.pruneIntervalMs) {
      kernel.scheduler.add({
        name: 'prune-previews',
        intervalMs: o.pruneIntervalMs,
        runAtStart: false,
        backoffMaxMs: o.pruneIntervalMs * 8,
        // A full batch means more are waiting: run again at once.
        run: async () => ((await pruneExpired(db, clock.now())) >= 1000 ? 'again' : undefined),
      });
    }
    let unfollow: (() => Promise<void>) | undefined;
    return {
      async start() {
        unfollow = await ctx.catalog.follow(kernel.logger);
        if (!o.seed) return;
        for (const file of typeof o.seed === 'string' ? [o.seed] : o.seed) {
          const formats = parseCatalog(JSON.parse(readFileSync(file, 'utf8')));
          const written = await upsertFormats(db, formats, 'reference', clock.now());
          kernel.logger.info({ seed: file, formats: formats.length, written }, 'creative format catalog seeded');
        }
      },
      stop: () => unfollow?.(),
    };
  },
});
