import * as v from 'valibot';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { CreativeGeneratorPort, GenerationRequest, ModelUsage } from '../../core/ports/creative-generator.ts';
import { ProtocolError } from '../../core/errors.ts';

/** Where the copy model is and how long to wait for it (plugins.creative.model). */
export interface ModelOptions {
  /** Base URL of an OpenAI-compatible API (`{baseUrl}/chat/completions`), e.g. https://api.openai.com/v1. */
  baseUrl: string;
  model: string;
  /** Bearer key (CREATIVE_MODEL_API_KEY); never logged. */
  apiKey?: string;
  timeoutMs: number;
  /** Further attempts after a 429, a 5xx, a timeout or a malformed answer. */
  retries: number;
  /** First pause between attempts; doubled each time (a Retry-After of the API wins when longer). */
  backoffMs: number;
}

const MAX_ANSWER_BYTES = 256 * 1024;

/** What the model must answer: short copy the templates lay out. */
const copySchema = v.object({
  headline: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(90)),
  body: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(400)),
  cta: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(30)),
});
type Copy = v.InferOutput<typeof copySchema>;

const completionSchema = v.object({
  choices: v.pipe(v.array(v.object({ message: v.object({ content: v.nullish(v.string()) }) })), v.minLength(1)),
  usage: v.optional(v.object({ prompt_tokens: v.optional(v.number(), 0), completion_tokens: v.optional(v.number(), 0) })),
});

/** A failure worth another attempt (rate limit, the API's own error, timeout, malformed copy), or not. */
class Attempt extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
    readonly retryAfterMs = 0,
  ) {
    super(message);
  }
}

function prompt(req: GenerationRequest): string {
  const lines = [
    `Write advertising copy for a ${req.format.name} (${req.format.type}) creative.`,
    req.brand?.name ? `Brand: ${req.brand.name}${req.brand.domain ? ` (${req.brand.domain})` : ''}.` : '',
    ...req.offerings.slice(0, 5).map((o) => `Offering: ${o.name}${o.description ? ` - ${o.description}` : ''}${o.tagline ? ` (${o.tagline})` : ''}.`),
    req.message ? `Brief: ${req.message}` : '',
    req.headline ? `Use this headline as given: ${req.headline}` : '',
    req.cta ? `Use this call to action as given: ${req.cta}` : '',
    'Answer with one JSON object only: {"headline": at most 90 characters, "body": at most 400 characters, "cta": at most 30 characters}.',
  ];
  return lines.filter(Boolean).join('\n');
}

/**
 * A CreativeGenerator that asks an OpenAI-compatible model for the copy (headline, body, call to action)
 * and lays it out with the template generator, so every asset still passes the format's checks. Calls go
 * through the Crawler port (SSRF guard, size and time limits); 429, 5xx, timeouts and malformed answers
 * are retried with exponential backoff, then the build fails as SERVICE_UNAVAILABLE (never a 500).
 */
export function createModelCopywriter(
  o: ModelOptions,
  deps: { crawler: CrawlerPort; template: CreativeGeneratorPort; sleep?: (ms: number) => Promise<void> },
): CreativeGeneratorPort {
  const sleep = deps.sleep ?? ((ms: number) => Bun.sleep(ms));
  const url = `${o.baseUrl.replace(/\/+$/, '')}/chat/completions`;

  const attempt = async (req: GenerationRequest): Promise<{ copy: Copy; usage: ModelUsage }> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
    const body = JSON.stringify({
      model: o.model,
      temperature: 0.7,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: 'You write short, factual advertising copy. You never invent prices, claims or facts that the brief does not give.' },
        { role: 'user', content: prompt(req) },
      ],
    });
    let res: Awaited<ReturnType<CrawlerPort['fetch']>>;
    try {
      res = await deps.crawler.fetch(url, { method: 'POST', headers, body, timeoutMs: o.timeoutMs, maxBytes: MAX_ANSWER_BYTES, accept: ['application/json'] });
    } catch (error) {
      throw new Attempt(`the copy model did not answer (${(error as Error).message})`, true);
    }
    if (res.status === 429 || res.status >= 500) {
      const after = Number(res.headers.get('retry-after'));
      throw new Attempt(`the copy model answered HTTP ${res.status}`, true, Number.isFinite(after) && after > 0 ? after * 1000 : 0);
    }
    if (res.status !== 200)
      throw new Attempt(`the copy model refused the request (HTTP ${res.status}); check CREATIVE_MODEL and CREATIVE_MODEL_API_KEY`, false);
    let parsed: v.InferOutput<typeof completionSchema>;
    let copy: Copy;
    try {
      parsed = v.parse(completionSchema, JSON.parse(res.text()));
      copy = v.parse(copySchema, JSON.parse(parsed.choices[0]!.message.content ?? ''));
    } catch {
      throw new Attempt('the copy model answered something other than the requested JSON copy', true);
    }
    return { copy, usage: { model: o.model, inputTokens: parsed.usage?.prompt_tokens ?? 0, outputTokens: parsed.usage?.completion_tokens ?? 0 } };
  };

  return {
    name: `model:${o.model}`,
    latency: 'slow',
    preflight: (request) => deps.template.preflight?.(request),
    async generate(req) {
      let pause = o.backoffMs;
      const spent: ModelUsage = { model: o.model, inputTokens: 0, outputTokens: 0 };
      for (let n = 0; ; n++) {
        try {
          const { copy, usage } = await attempt(req);
          spent.inputTokens += usage.inputTokens;
          spent.outputTokens += usage.outputTokens;
          const result = await deps.template.generate({ ...req, headline: req.headline ?? copy.headline, body: copy.body, cta: req.cta ?? copy.cta });
          return { ...result, usage: spent };
        } catch (error) {
          if (!(error instanceof Attempt)) throw error;
          if (!error.retry || n >= o.retries) {
            throw new ProtocolError('SERVICE_UNAVAILABLE', `Creative generation failed: ${error.message}`, {
              status: 503,
              recovery: error.retry ? 'transient' : 'terminal',
            });
          }
          await sleep(Math.max(pause, error.retryAfterMs));
          pause *= 2;
        }
      }
    },
  };
}
