import {
  GenerationError,
  type CreativeGeneratorPort,
  type FormatAssetSlot,
  type GenerationRequest,
  type GenerationResult,
} from '../../core/ports/creative-generator.ts';
import { daastTag, htmlBanner, svgBanner, vastTag, type BannerCopy } from './templates.ts';
import { fontFamily, normalizeHexColor } from '../../lib/brand-identity.ts';

type Json = Record<string, any>;

/** Slot types whose content must come from a supplied media file. */
const MEDIA_SOURCE: Record<string, string> = { video: 'video', vast: 'video', audio: 'audio', daast: 'audio' };
/** Slot types the template generator writes itself. */
const WRITTEN = new Set(['text', 'markdown', 'url', 'image', 'html', 'video', 'audio', 'vast', 'daast']);

const DEFAULT_COLORS = { primary: '#1F2937', secondary: '#F3F4F6', accent: '#2563EB' };
const MIME: Record<string, string> = {
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
};

function firstSentence(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const sentence = text.split(/(?<=[.!?])\s/)[0]!.trim();
  return sentence.length > 90 ? `${sentence.slice(0, 89).trimEnd()}…` : sentence;
}

/** The message after its first sentence (what is left once that sentence is the headline), if anything. */
function afterFirstSentence(text: string | undefined): string | undefined {
  const rest = text
    ?.split(/(?<=[.!?])\s/)
    .slice(1)
    .join(' ')
    .trim();
  return rest || undefined;
}

/** Body copy that says something the headline does not: never the headline again. */
function distinct(body: string | undefined, headline: string | undefined): string | undefined {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  return body && (!headline || norm(body) !== norm(headline)) ? body : undefined;
}

function mimeOf(url: string, fallback: string): string {
  const ext = /\.([a-z0-9]{2,4})(?:$|[?#])/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return (ext && MIME[ext]) || fallback;
}

/** The first supplied asset matching `test`, by asset id then by kind. */
function seeded(seeds: Readonly<Record<string, Json>>, test: (id: string, a: Json) => boolean): Json | undefined {
  return Object.entries(seeds).find(([id, a]) => test(id, a))?.[1];
}

/** Duration of a time-based slot: the format id's, the slot's fixed duration, the supplied file's, else 30 s. */
function durationFor(req: GenerationRequest, slot: FormatAssetSlot, media: Json | undefined): number {
  const r = (slot.requirements ?? {}) as Json;
  if (req.durationMs) return req.durationMs;
  if (typeof r.min_duration_ms === 'number' && r.min_duration_ms === r.max_duration_ms) return r.min_duration_ms;
  return typeof media?.duration_ms === 'number' ? media.duration_ms : 30_000;
}

/**
 * The built-in deterministic generator: the same request always yields the same creative.
 * Text slots are written from the brief (offerings, message, brand name) by the slot's name;
 * display and image slots become banners in the brand's colours (HTML5 markup, or SVG files this
 * agent hosts); video and audio slots reference supplied media files, wrapped in inline VAST or
 * DAAST tags where the format asks for one. It never writes JavaScript.
 */
export function createTemplateGenerator(): CreativeGeneratorPort {
  return {
    name: 'template',
    latency: 'fast',
    preflight({ format, seeds }) {
      const has = (type: string) => Object.values(seeds).some((a) => a.asset_type === type);
      for (const slot of format.assets) {
        if (!slot.required || seeds[slot.asset_id]?.asset_type === slot.asset_type) continue;
        const media = MEDIA_SOURCE[slot.asset_type];
        if (media && !has(media)) {
          throw new GenerationError(
            slot.asset_id,
            `${slot.asset_id}: ${format.format_id.id} needs a supplied ${media} file (asset_type ${media} with a url)`,
            `Add a ${media} asset to creative_manifest.assets`,
          );
        }
        if (!WRITTEN.has(slot.asset_type))
          throw new GenerationError(
            slot.asset_id,
            `${slot.asset_id}: the template generator does not write ${slot.asset_type} assets`,
            `Supply assets.${slot.asset_id} yourself`,
          );
      }
    },
    async generate(req: GenerationRequest): Promise<GenerationResult> {
      const { seeds, format } = req;
      const offering = req.offerings[0];
      const seedText = (re: RegExp) => seeded(seeds, (id, a) => a.asset_type === 'text' && re.test(id))?.content as string | undefined;
      const seedUrl = (re: RegExp) =>
        seeded(seeds, (id, a) => a.asset_type === 'url' && re.test(id) && a.url_type !== 'tracker_pixel' && a.url_type !== 'tracker_script')?.url as
          | string
          | undefined;

      const sponsor =
        req.brand?.name ||
        seedText(/sponsor|advertiser|brand|disclosure|author/)?.replace(/^\s*(sponsored|presented|brought to you)\s+by\s+/i, '') ||
        undefined;
      const named = req.headline ?? seedText(/title|headline/) ?? offering?.name;
      const headline = named ?? firstSentence(req.message) ?? (sponsor ? `Discover ${sponsor}` : undefined);
      // The body adds to the headline: the rest of the message when its first sentence became the headline,
      // else the brand's tagline; never the headline repeated.
      const message = named ? req.message : afterFirstSentence(req.message);
      const body = distinct(req.body ?? seedText(/desc|body|copy/) ?? offering?.description ?? offering?.tagline ?? message ?? req.brand?.tagline, headline);
      const cta = req.cta ?? seedText(/cta/) ?? 'Learn more';
      const landing = offering?.landing_url ?? seedUrl(/click|cta|landing|destination/) ?? (req.brand?.domain ? `https://${req.brand.domain}/` : undefined);
      const image = seeded(seeds, (_id, a) => a.asset_type === 'image');
      const video = seeded(seeds, (_id, a) => a.asset_type === 'video');
      const audio = seeded(seeds, (_id, a) => a.asset_type === 'audio');
      const trackers = Object.values(seeds)
        .filter((a) => a.asset_type === 'url' && a.url_type === 'tracker_pixel')
        .map((a) => a.url as string);
      // Colours go into markup: only #RRGGBB values pass, whichever adapter resolved the brand.
      const given = req.brand?.colors ?? {};
      const own = { primary: normalizeHexColor(given.primary), secondary: normalizeHexColor(given.secondary), accent: normalizeHexColor(given.accent) };
      const colors = {
        primary: own.primary ?? DEFAULT_COLORS.primary,
        secondary: own.secondary ?? DEFAULT_COLORS.secondary,
        accent: own.accent ?? own.primary ?? DEFAULT_COLORS.accent,
      };
      const copy = (): BannerCopy => {
        if (!headline || !sponsor)
          throw new GenerationError(
            'brand',
            'A banner needs a brand name and something to say',
            'Send brand {domain} or promoted_offerings.brand_manifest.name',
          );
        return {
          headline,
          body,
          sponsor,
          cta,
          background: colors.primary,
          band: colors.secondary,
          accent: colors.accent,
          logoUrl: req.brand?.logo_url,
          landingUrl: landing,
          font: fontFamily(req.brand?.fonts?.primary),
        };
      };

      const textFor = (id: string): string | undefined => {
        if (/prompt/.test(id)) return req.message ?? headline;
        if (/sponsor|advertiser/.test(id)) return sponsor;
        if (/disclosure/.test(id)) return sponsor && `Sponsored by ${sponsor}`;
        if (/author/.test(id)) return sponsor;
        if (/cta/.test(id)) return cta;
        if (/desc|body|copy/.test(id)) return body;
        if (/mention/.test(id)) return headline && sponsor ? `${headline}, from ${sponsor}` : undefined;
        return headline;
      };

      const fill = (slot: FormatAssetSlot): Json | undefined => {
        const own = seeds[slot.asset_id]?.asset_type === slot.asset_type ? seeds[slot.asset_id] : undefined;
        // A supplied image must also fit the slot's size (decided below).
        if (own && slot.asset_type !== 'image') return own;
        const r = (slot.requirements ?? {}) as Json;
        const missing = (why: string, suggestion?: string) => {
          if (slot.required) throw new GenerationError(slot.asset_id, `${slot.asset_id}: ${why}`, suggestion);
          return undefined;
        };
        switch (slot.asset_type) {
          case 'text': {
            // A required body slot with nothing else to say falls back to the headline (a format that needs both).
            const content = textFor(slot.asset_id) ?? (slot.required ? headline : undefined);
            return content ? { asset_type: 'text', content } : missing('nothing to write it from', 'Send a message, offerings or a brand');
          }
          case 'markdown':
            return headline
              ? { asset_type: 'markdown', content: `**${headline.replace(/[*_`[\]]/g, '')}**${body ? `\n\n${body.replace(/[*_`[\]]/g, '')}` : ''}` }
              : missing('nothing to write it from');
          case 'url': {
            if (r.role && r.role !== 'clickthrough' && r.role !== 'landing_page')
              return missing('tracking URLs are not generated', `Supply assets.${slot.asset_id}`);
            return landing
              ? { asset_type: 'url', url: landing, url_type: 'clickthrough' }
              : missing('no landing page is known', 'Send an offering landing_url, a click URL asset or a brand domain');
          }
          case 'image': {
            if (/icon|logo/.test(slot.asset_id)) {
              if (own) return own;
              return req.brand?.logo_url ? { asset_type: 'image', url: req.brand.logo_url, width: 200, height: 200 } : missing('no logo is known');
            }
            const supplied = own ?? image;
            const [dw, dh] = format.type === 'dooh' ? [1920, 1080] : [1200, 627];
            const width = typeof r.width === 'number' ? r.width : (req.size?.width ?? dw);
            const height = typeof r.height === 'number' ? r.height : (req.size?.height ?? dh);
            // A supplied image is kept where it fits (native slots take any size; banners need theirs);
            // otherwise a banner is rendered in the brand's colours and hosted by this agent.
            const sized = typeof r.width === 'number' || format.type === 'display' || format.type === 'dooh';
            if (supplied && (!sized || (supplied.width === width && supplied.height === height))) return { ...supplied };
            if (!slot.required && format.type !== 'native') return undefined;
            const url = req.host({ contentType: 'image/svg+xml', body: svgBanner(copy(), width, height) });
            return { asset_type: 'image', url, width, height, format: 'svg', alt_text: `${sponsor}: ${headline}` };
          }
          case 'html':
            return { asset_type: 'html', content: htmlBanner(copy(), req.size?.width ?? r.width, req.size?.height ?? r.height), version: 'HTML5' };
          case 'video':
            return video
              ? { ...video }
              : missing('video formats need a supplied video file (asset_type video with a url)', 'Add a video asset to creative_manifest.assets');
          case 'audio':
            return audio
              ? { ...audio }
              : missing('audio formats need a supplied audio file (asset_type audio with a url)', 'Add an audio asset to creative_manifest.assets');
          case 'vast': {
            if (!video) return missing('a VAST tag needs a supplied video file (asset_type video with a url)', 'Add a video asset to creative_manifest.assets');
            const tag = vastTag({
              adId: format.format_id.id,
              title: headline ?? format.name,
              advertiser: sponsor ?? '',
              mediaUrl: video.url,
              mimeType: mimeOf(video.url, 'video/mp4'),
              durationMs: durationFor(req, slot, video),
              width: video.width ?? req.size?.width,
              height: video.height ?? req.size?.height,
              clickUrl: landing,
              impressionUrls: trackers,
            });
            return { asset_type: 'vast', delivery_type: 'inline', content: tag, vast_version: '4.2', duration_ms: durationFor(req, slot, video) };
          }
          case 'daast': {
            if (!audio)
              return missing('a DAAST tag needs a supplied audio file (asset_type audio with a url)', 'Add an audio asset to creative_manifest.assets');
            const tag = daastTag({
              adId: format.format_id.id,
              title: headline ?? format.name,
              advertiser: sponsor ?? '',
              mediaUrl: audio.url,
              mimeType: mimeOf(audio.url, 'audio/mpeg'),
              durationMs: durationFor(req, slot, audio),
              clickUrl: landing,
              impressionUrls: trackers,
            });
            return { asset_type: 'daast', delivery_type: 'inline', content: tag, daast_version: '1.0', duration_ms: durationFor(req, slot, audio) };
          }
          default:
            return missing(`the template generator does not write ${slot.asset_type} assets`, `Supply assets.${slot.asset_id} yourself`);
        }
      };

      const assets: Record<string, Json> = {};
      for (const slot of format.assets) {
        const asset = fill(slot);
        if (asset) assets[slot.asset_id] = asset;
      }
      return { assets };
    },
  };
}
