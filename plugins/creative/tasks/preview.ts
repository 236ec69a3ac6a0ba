import * as v from 'valibot';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import type { Principal } from '../../../core/ports/auth.ts';
import type { FormatDefinition } from '../../../core/ports/creative-generator.ts';
import { formatIdIssueCode, formatIdSchema } from '../format-id.ts';
import { applyMacros, checkAgainstFormat, manifestSchema, previewInputSchema, type Manifest, type PreviewInput } from '../manifest.ts';
import { exampleFormatStandIn, resolveFormats, type CreativeContext } from '../context.ts';
import { insertPreviews, newPreviewId, type PreviewRow } from '../previews.ts';
import { PREVIEW_CSP, previewBody, renderedFormat } from '../render.ts';
import { MAX_LINK_URL, PreviewLinks } from '../preview-links.ts';
import { normalizeAgentUrl } from '../../../lib/urls.ts';
import { CoalescedWrite } from '../../../lib/coalesced-write.ts';
import { declareJson, JsonBuilder, JsonPiece } from '../../../lib/prebuilt-json.ts';

const outputFormat = v.optional(v.picklist(['url', 'html'], 'must be url or html'));
const inputs = v.optional(
  v.pipe(
    v.array(previewInputSchema, 'must be an array of {name, macros}'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(20, 'accepts at most 20 variants'),
  ),
);

const previewItem = v.object({
  format_id: v.optional(formatIdSchema),
  creative_manifest: manifestSchema,
  inputs,
  output_format: outputFormat,
  creative_id: v.optional(v.pipe(v.string('must be a string'), v.minLength(1), v.maxLength(255))),
});

export const previewInput = v.pipe(
  v.object({
    request_type: v.picklist(['single', 'batch', 'variant'], 'must be single or batch'),
    format_id: v.optional(formatIdSchema),
    creative_manifest: v.optional(manifestSchema),
    inputs,
    output_format: outputFormat,
    requests: v.optional(
      v.pipe(
        v.array(previewItem, 'must be an array of {format_id, creative_manifest}'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(50, 'accepts at most 50 requests'),
      ),
    ),
  }),
  v.forward(
    v.check((i) => i.request_type !== 'single' || i.creative_manifest !== undefined, 'is required when request_type is single'),
    ['creative_manifest'],
  ),
  v.forward(
    v.check((i) => i.request_type !== 'batch' || i.requests !== undefined, 'is required when request_type is batch'),
    ['requests'],
  ),
);

interface Item {
  format_id?: v.InferOutput<typeof formatIdSchema>;
  creative_manifest: Manifest;
  inputs?: PreviewInput[];
  output_format?: 'url' | 'html';
}

/** The `embedding` of every url render. */
const embedding = () => ({ recommended_sandbox: '', requires_https: false, csp_policy: PREVIEW_CSP });

/**
 * The constant texts of a url preview's JSON (lib/prebuilt-json.ts), escaped once: its URL (up to
 * 2000 characters, twice in each preview) is never serialized nor escaped, its path being base64url
 * and base 36, its id a UUID or the path.
 */
const J = {
  previewId: JsonPiece.text('{"preview_id":"'),
  renderId: JsonPiece.text('","renders":[{"render_id":"'),
  renderUrl: JsonPiece.text('-primary","output_format":"url","preview_url":'),
  role: JsonPiece.text('","role":"primary"'),
  embedding: JsonPiece.text(`,"embedding":${JSON.stringify(embedding())}}],"input":`),
  previewUrl: JsonPiece.text(',"preview_url":'),
  close: JsonPiece.text('"}'),
  comma: JsonPiece.text(','),
  batch: JsonPiece.text('"response_type":"batch","results":['),
  single: JsonPiece.text('"response_type":"single","previews":['),
  success: JsonPiece.text('{"success":true,"creative_id":'),
  response: JsonPiece.text(',"response":{"previews":['),
  responseEnd: JsonPiece.text('],"expires_at":"'),
  resultEnd: JsonPiece.text('"}}'),
  end: JsonPiece.text('],"expires_at":"'),
  quote: JsonPiece.text('"'),
};

export function previewCreativeTask(ctx: CreativeContext) {
  /** `"{publicUrl}/previews/`: a preview URL's JSON is it, the path and a quote. */
  const urlOpen = JsonPiece.text(JSON.stringify(`${ctx.publicUrl}/previews/`).slice(0, -1));
  /** The JSON of the url previews rendered (the others are serialized when answered). */
  const previewJson = new WeakMap<object, JsonPiece>();
  /** Appends the JSON of `previews` (an array's items) to `b`. */
  const addPreviews = (b: JsonBuilder, previews: readonly Json[]) => {
    for (const [i, p] of previews.entries()) {
      if (i) b.piece(J.comma);
      const piece = previewJson.get(p);
      if (piece) b.piece(piece);
      else b.text(JSON.stringify(p));
    }
  };
  // Concurrent requests' previews go in one INSERT (each answers once its rows are committed): one
  // commit for many requests instead of one each.
  const store = new CoalescedWrite<PreviewRow>((rows) => insertPreviews(ctx.db, rows), { concurrency: 2, maxItems: 1000 });
  /**
   * Previews of one manifest, one per input variant. A `url` preview of a catalog format is a sealed
   * link (its id carries it, nothing stored) unless its URL would be too long; the others are rows
   * to store. Throws ProtocolError.
   */
  async function render(
    item: Item,
    prefix: string,
    principal: Principal,
    createdAt: Date,
    expiresAt: Date,
    rows: PreviewRow[],
    known: ReadonlyMap<string, FormatDefinition>,
    /** The link key; none when links are off. */
    key: Buffer | undefined,
  ): Promise<Json[]> {
    const manifest = item.creative_manifest;
    const ref = item.format_id ?? manifest.format_id;
    if (
      item.format_id &&
      (item.format_id.id !== manifest.format_id.id || normalizeAgentUrl(item.format_id.agent_url) !== normalizeAgentUrl(manifest.format_id.agent_url))
    ) {
      throw new ProtocolError('INVALID_REQUEST', `${prefix}format_id: must name the format of ${prefix}creative_manifest (${manifest.format_id.id})`, {
        field: `${prefix}format_id`,
      });
    }
    // Generation inputs are not part of a finished creative.
    let assets = manifest.assets as Json;
    if (Object.hasOwn(assets, 'promoted_offerings')) {
      const { promoted_offerings: _p, ...rest } = assets;
      assets = rest;
    }
    const [format] = await resolveFormats(
      ctx,
      [{ ref, field: item.format_id ? `${prefix}format_id` : `${prefix}creative_manifest.format_id` }],
      known,
      exampleFormatStandIn(ctx, assets),
    );
    checkAgainstFormat(format!.definition, assets, `${prefix}creative_manifest.assets`);
    const variants: PreviewInput[] = item.inputs ?? [{ name: 'Default' }];
    const output = item.output_format ?? 'url';
    // Every variant is checked before any is stored: one bad macro stores nothing.
    const applied = variants.map((variant, j) => applyMacros(assets, variant.macros, `${prefix}inputs[${j}].macros`));
    // A sandbox stand-in is not in the catalog a viewer resolves links against: stored rows.
    const linkable = key !== undefined && known.get(format!.definition.format_id.id) === format!.definition;
    let stored: FormatDefinition | undefined;
    return variants.map((variant, j) => {
      const view = { format: format!.definition, assets: applied[j]!, brand: manifest.brand as Json | undefined, variant: variant.name, ...format!.size };
      const input: Json = { name: variant.name, ...(variant.macros ? { macros: variant.macros } : {}) };
      const dimensions = format!.size ? { dimensions: format!.size } : {};
      if (output === 'html') {
        const html = previewBody(view);
        const id = crypto.randomUUID();
        return {
          preview_id: id,
          renders: [{ render_id: `${id}-primary`, output_format: 'html', preview_html: html, role: 'primary', ...dimensions }],
          input,
          preview_html: html,
        };
      }
      const base = `${ctx.publicUrl}/previews/`;
      let id: string | undefined;
      let path: string | undefined;
      if (linkable) {
        const link = { format: format!.definition.format_id.id, assets: view.assets, brand: view.brand, variant: view.variant, ...format!.size };
        path = PreviewLinks.seal(key!, link, expiresAt, MAX_LINK_URL - base.length);
        // A short id of its own, as html previews have: the answer carries it three times, the long link twice.
        id = crypto.randomUUID();
      }
      if (path === undefined) {
        id = path = newPreviewId(expiresAt);
        rows.push({
          id,
          principalId: principal.id,
          format: (stored ??= renderedFormat(format!.definition)),
          manifest: { ...manifest, assets: applied[j]! },
          input: { ...input, ...format!.size },
          createdAt,
          expiresAt,
        });
      }
      const url = base + path;
      const preview = {
        preview_id: id!,
        renders: [{ render_id: `${id}-primary`, output_format: 'url', preview_url: url, role: 'primary', ...dimensions, embedding: embedding() }],
        input,
        preview_url: url,
      };
      const b = new JsonBuilder().piece(J.previewId).verbatim(id!).piece(J.renderId).verbatim(id!).piece(J.renderUrl);
      b.piece(urlOpen).verbatim(path).piece(J.role);
      if (format!.size) b.text(`,"dimensions":${JSON.stringify(format!.size)}`);
      b.piece(J.embedding).text(JSON.stringify(input)).piece(J.previewUrl).piece(urlOpen).verbatim(path).piece(J.close);
      previewJson.set(preview, b.done());
      return preview;
    });
  }

  return defineTask({
    name: 'preview_creative',
    description:
      'Preview creative manifests: single or batch, one preview per input variant (macros substituted), as a URL served by this agent (default) or as HTML. Previews expire at expires_at.',
    protocol: 'creative',
    errorShape: 'creative',
    inputIssueCode: formatIdIssueCode,
    input: previewInput,
    async handler({ input, principal, clock }) {
      if (input.request_type === 'variant') {
        throw new ProtocolError('UNSUPPORTED_FEATURE', 'request_type: variant previews need delivery data this agent does not keep; use single or batch', {
          field: 'request_type',
        });
      }
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + ctx.previewTtlMs);
      const expires = expiresAt.toISOString();
      const rows: PreviewRow[] = [];
      const key = ctx.previewLinks ? await ctx.links.ready() : undefined;
      let body: Json;
      if (input.request_type === 'single') {
        const known = await ctx.catalog.find([(input.format_id ?? input.creative_manifest!.format_id).id]);
        const previews = await render(
          { format_id: input.format_id, creative_manifest: input.creative_manifest!, inputs: input.inputs, output_format: input.output_format },
          '',
          principal,
          now,
          expiresAt,
          rows,
          known,
          key,
        );
        body = { response_type: 'single', previews, expires_at: expires };
        const b = new JsonBuilder().piece(J.single);
        addPreviews(b, previews);
        declareJson(body, [b.piece(J.end).verbatim(expires).piece(J.quote).done()]);
      } else {
        // One result per request, in order; a failing request does not fail the others.
        const results: Json[] = [];
        const b = new JsonBuilder().piece(J.batch);
        const known = await ctx.catalog.find(input.requests!.map((r) => (r.format_id ?? r.creative_manifest.format_id).id));
        for (const [i, item] of input.requests!.entries()) {
          const creativeId = item.creative_id ?? `request-${i + 1}`;
          try {
            const previews = await render(
              { ...item, output_format: item.output_format ?? input.output_format },
              `requests[${i}].`,
              principal,
              now,
              expiresAt,
              rows,
              known,
              key,
            );
            results.push({ success: true, creative_id: creativeId, response: { previews, expires_at: expires } });
            if (i) b.piece(J.comma);
            b.piece(J.success).text(JSON.stringify(creativeId)).piece(J.response);
            addPreviews(b, previews);
            b.piece(J.responseEnd).verbatim(expires).piece(J.resultEnd);
          } catch (error) {
            if (!(error instanceof ProtocolError)) throw error;
            const failed = { success: false, creative_id: creativeId, errors: [error.toTaskError()] };
            results.push(failed);
            if (i) b.piece(J.comma);
            b.text(JSON.stringify(failed));
          }
        }
        body = { response_type: 'batch', results, expires_at: expires };
        declareJson(body, [b.piece(J.end).verbatim(expires).piece(J.quote).done()]);
      }
      await store.write(rows);
      return body;
    },
  });
}
