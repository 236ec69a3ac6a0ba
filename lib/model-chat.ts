import * as v from 'valibot';
import type { CrawlerPort } from '../core/ports/crawler.ts';
import { ProtocolError } from '../core/errors.ts';

/** Where an OpenAI-compatible chat model is and how long to wait for it. */
export interface ChatModelOptions {
  /** Base URL of the API (`{baseUrl}/chat/completions`), e.g. https://api.openai.com/v1. */
  baseUrl: string;
  model: string;
  /** Bearer key; sent only in the authorization header, never logged nor put in a message. */
  apiKey?: string;
  timeoutMs: number;
  /** Further attempts after a 429, a 5xx, a timeout or a malformed answer. */
  retries: number;
  /** First pause between attempts; doubled each time (a Retry-After of the API wins when longer). */
  backoffMs: number;
  /** http:// model URLs (a loopback model server in tests, with the crawler's allowlist); never in production. */
  allowHttp?: boolean;
}

/**
 * The option fields of a chat model (valibot entries), with the environment variables the errors name:
 * `chatModelFields({ url: 'CREATIVE_MODEL_URL', model: 'CREATIVE_MODEL' })`.
 */
export function chatModelFields(variables: { url: string; model: string }) {
  return {
    baseUrl: v.pipe(
      v.string(`is required (${variables.url}), e.g. https://api.openai.com/v1`),
      v.url(`must be an absolute URL (${variables.url}), e.g. https://api.openai.com/v1`),
    ),
    model: v.pipe(v.string(`is required (${variables.model}), e.g. gpt-4o-mini`), v.minLength(1, `is required (${variables.model}), e.g. gpt-4o-mini`)),
    apiKey: v.optional(v.pipe(v.string(), v.minLength(1))),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(300_000)), 30_000),
    retries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(5)), 2),
    backoffMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(60_000)), 1000),
    allowHttp: v.optional(v.boolean(), false),
  };
}

/** Tokens the model billed for one request, over all its attempts. */
export interface ChatUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface ChatJsonRequest<S extends v.GenericSchema> {
  messages: ReadonlyArray<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  /** The JSON object the answer's content must be; an answer it refuses is retried like a 5xx. */
  answer: S;
  temperature?: number;
  /** How failures name the model and what it was asked for. */
  labels: {
    /** `the copy model`. */
    model: string;
    /** `the requested JSON copy`. */
    expected: string;
    /** The variables to check when the API refuses the key or the model: `CREATIVE_MODEL and CREATIVE_MODEL_API_KEY`. */
    credentials: string;
    /** Start of the SERVICE_UNAVAILABLE message: `Creative generation failed`. */
    failure: string;
  };
}

const MAX_ANSWER_BYTES = 256 * 1024;

const completionSchema = v.object({
  choices: v.pipe(v.array(v.object({ message: v.object({ content: v.nullish(v.string()) }) })), v.minLength(1)),
  usage: v.optional(v.object({ prompt_tokens: v.optional(v.number(), 0), completion_tokens: v.optional(v.number(), 0) })),
});

/** A failure worth another attempt (rate limit, the API's own error, timeout, malformed answer), or not. */
class Attempt extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
    readonly retryAfterMs = 0,
  ) {
    super(message);
  }
}

/** Models asked for JSON still wrap it in a markdown fence now and then. */
const unfence = (content: string) => /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(content)?.[1] ?? content;

/**
 * One chat-completions request whose answer is a JSON object checked against `answer`: sent through the
 * Crawler port (SSRF guard, size and time limits), retried after a 429, a 5xx, a timeout or a malformed
 * answer with exponential backoff (a longer Retry-After wins), then failed as SERVICE_UNAVAILABLE (503,
 * never a 500). A refused request (401, 404...) fails at once, naming the variables to check. Tokens of
 * every attempt the API billed are summed.
 */
export async function chatJson<S extends v.GenericSchema>(
  o: ChatModelOptions,
  request: ChatJsonRequest<S>,
  deps: { crawler: CrawlerPort; sleep?: (ms: number) => Promise<void> },
): Promise<{ value: v.InferOutput<S>; usage: ChatUsage }> {
  const sleep = deps.sleep ?? ((ms: number) => Bun.sleep(ms));
  const { labels } = request;
  const url = `${o.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
  const body = JSON.stringify({
    model: o.model,
    temperature: request.temperature ?? 0.7,
    response_format: { type: 'json_object' },
    messages: request.messages,
  });
  const usage: ChatUsage = { model: o.model, inputTokens: 0, outputTokens: 0 };

  const attempt = async (): Promise<v.InferOutput<S>> => {
    let res: Awaited<ReturnType<CrawlerPort['fetch']>>;
    try {
      res = await deps.crawler.fetch(url, {
        method: 'POST',
        headers,
        body,
        timeoutMs: o.timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
        accept: ['application/json'],
        ...(o.allowHttp ? { requireHttps: false } : {}),
      });
    } catch (error) {
      throw new Attempt(`${labels.model} did not answer (${(error as Error).message})`, true);
    }
    if (res.status === 429 || res.status >= 500) {
      const after = Number(res.headers.get('retry-after'));
      throw new Attempt(`${labels.model} answered HTTP ${res.status}`, true, Number.isFinite(after) && after > 0 ? after * 1000 : 0);
    }
    if (res.status !== 200) throw new Attempt(`${labels.model} refused the request (HTTP ${res.status}); check ${labels.credentials}`, false);
    const malformed = (why?: string) => new Attempt(`${labels.model} answered something other than ${labels.expected}${why ? ` (${why})` : ''}`, true);
    let completion: v.InferOutput<typeof completionSchema>;
    try {
      completion = v.parse(completionSchema, JSON.parse(res.text()));
    } catch {
      throw malformed();
    }
    // Billed even when the content is unusable.
    usage.inputTokens += completion.usage?.prompt_tokens ?? 0;
    usage.outputTokens += completion.usage?.completion_tokens ?? 0;
    let content: unknown;
    try {
      content = JSON.parse(unfence(completion.choices[0]!.message.content ?? ''));
    } catch {
      throw malformed();
    }
    const checked = v.safeParse(request.answer, content);
    // The first issue's own message (ours, from the schema) says why; the model's text is not repeated.
    if (!checked.success) throw malformed(checked.issues[0] ? `${v.getDotPath(checked.issues[0]) ?? 'answer'}: ${checked.issues[0].message}` : undefined);
    return checked.output;
  };

  let pause = o.backoffMs;
  for (let n = 0; ; n++) {
    try {
      return { value: await attempt(), usage };
    } catch (error) {
      if (!(error instanceof Attempt)) throw error;
      if (!error.retry || n >= o.retries) {
        throw new ProtocolError('SERVICE_UNAVAILABLE', `${labels.failure}: ${error.message}`, {
          status: 503,
          recovery: error.retry ? 'transient' : 'terminal',
        });
      }
      await sleep(Math.max(pause, error.retryAfterMs));
      pause *= 2;
    }
  }
}
