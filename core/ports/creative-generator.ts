import { token } from '../token.ts';
import type { BrandIdentity } from './brand-lookup.ts';

type Json = Record<string, unknown>;

/** A format identifier: always an object, never a bare string (agent-protocol "Format identifier"). */
export interface FormatId {
  agent_url: string;
  id: string;
  width?: number;
  height?: number;
  duration_ms?: number;
}

/** One asset slot of a format definition as list_creative_formats shows it. */
export interface FormatAssetSlot {
  item_type: 'individual';
  asset_id: string;
  asset_type: string;
  required: boolean;
  requirements?: Json;
  [member: string]: unknown;
}

/** A format definition as list_creative_formats shows it. */
export interface FormatDefinition {
  format_id: FormatId;
  name: string;
  type: string;
  description?: string;
  renders?: Json[];
  assets: FormatAssetSlot[];
  [member: string]: unknown;
}

/** Something the brand promotes, from `inline_offerings` or an `offering` catalog. */
export interface Offering {
  name: string;
  description?: string;
  tagline?: string;
  landing_url?: string;
  image_url?: string;
}

export interface GenerationRequest {
  /** `generation`: from a brief (message, brand, offerings); `transformation`: re-target a complete manifest (in `seeds`). */
  mode: 'generation' | 'transformation';
  /** The target format. */
  format: FormatDefinition;
  /** Pixel size of the target (its render, or the format id's parameters), when it has one. */
  size?: { width: number; height: number };
  /** Duration of the target (format id parameter or the format's requirement), when time-based. */
  durationMs?: number;
  /** Natural-language guidance (the creative brief). */
  message?: string;
  brand?: BrandIdentity;
  offerings: readonly Offering[];
  headline?: string;
  /** Body copy to use where a format has a description or body slot (a copywriting model's answer). */
  body?: string;
  cta?: string;
  /** Assets the caller supplied, keyed by asset id: generation inputs, or the source manifest's assets. Validated already. */
  seeds: Readonly<Record<string, Json>>;
  /** Publish a file this agent serves (a rendered image): returns its absolute http(s) URL. */
  host(file: { contentType: string; body: string }): string;
  /** Aborted when the deployment stops. */
  signal?: AbortSignal;
}

/** What a model call consumed, recorded per build for usage reporting. */
export interface ModelUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface GenerationResult {
  /** Every required asset of the target format (and any optional ones produced), keyed by asset id. */
  assets: Record<string, Json>;
  /** Model calls behind this creative, when a model wrote it. */
  usage?: ModelUsage;
}

/** The generator cannot produce a required asset from what it was given (answered as 422 naming the asset). */
export class GenerationError extends Error {
  override name = 'GenerationError';
  constructor(
    readonly assetId: string,
    message: string,
    readonly suggestion?: string,
  ) {
    super(message);
  }
}

/**
 * Produces the assets of a creative in a target format (build_creative).
 *
 * The creative plugin ships a deterministic template generator (HTML5, display, native and text
 * formats from brand colours, name, offerings and message; VAST/DAAST tags and hosted files for
 * video and audio from supplied media URLs) and uses it when no plugin provides this port.
 *
 * Adapter point for an external model: a plugin that `provides: [CreativeGenerator]` and binds an
 * object calling the model. It should reach the model through the Crawler port (SSRF guard, size
 * and time limits), return only http(s) URLs (or `host(...)` files), raise GenerationError naming
 * the asset it cannot produce, and declare `latency: 'slow'` so every build runs as an
 * asynchronous task with progress and push notifications.
 */
export interface CreativeGeneratorPort {
  readonly name: string;
  /** `slow` (a model call): every build is asynchronous. `fast`: transformations answer at once. */
  readonly latency: 'fast' | 'slow';
  /**
   * Optional check before a build is accepted: throw GenerationError for inputs the generator
   * surely lacks (a video format without a supplied file), so the caller gets a 422 at once and
   * no task is created. The brand may still be unresolved here.
   */
  preflight?(request: Omit<GenerationRequest, 'host' | 'brand' | 'signal'>): void;
  generate(request: GenerationRequest): Promise<GenerationResult>;
}

export const CreativeGenerator = token<CreativeGeneratorPort>('core.creative-generator');
