import * as v from 'valibot';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { CreativeGeneratorPort, GenerationRequest } from '../../core/ports/creative-generator.ts';
import { chatJson, type ChatModelOptions } from '../../lib/model-chat.ts';

/** What the model must answer: short copy the templates lay out. */
const copySchema = v.object({
  headline: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(90)),
  body: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(400)),
  cta: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(30)),
});

const LABELS = {
  model: 'the copy model',
  expected: 'the requested JSON copy',
  credentials: 'CREATIVE_MODEL and CREATIVE_MODEL_API_KEY',
  failure: 'Creative generation failed',
};

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
 * and lays it out with the template generator, so every asset still passes the format's checks. The call
 * (Crawler port, retries with backoff, SERVICE_UNAVAILABLE when the model cannot answer) is lib/model-chat.ts.
 */
export function createModelCopywriter(
  o: ChatModelOptions,
  deps: { crawler: CrawlerPort; template: CreativeGeneratorPort; sleep?: (ms: number) => Promise<void> },
): CreativeGeneratorPort {
  return {
    name: `model:${o.model}`,
    latency: 'slow',
    preflight: (request) => deps.template.preflight?.(request),
    async generate(req) {
      const { value: copy, usage } = await chatJson(
        o,
        {
          answer: copySchema,
          labels: LABELS,
          messages: [
            { role: 'system', content: 'You write short, factual advertising copy. You never invent prices, claims or facts that the brief does not give.' },
            { role: 'user', content: prompt(req) },
          ],
        },
        deps,
      );
      const result = await deps.template.generate({ ...req, headline: req.headline ?? copy.headline, body: copy.body, cta: req.cta ?? copy.cta });
      return { ...result, usage };
    },
  };
}
