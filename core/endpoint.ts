import * as v from 'valibot';
import { token } from './token.ts';
import type { Principal, Tier } from './ports/auth.ts';
import type { Logger } from './log.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** `none`: public; `optional`: principal when a valid credential is sent; `required`: 401 without one. */
export type AuthMode = 'none' | 'optional' | 'required';

export interface EndpointRequest<Q, P, B> {
  query: Q;
  params: P;
  body: B;
  principal: Principal | null;
  requestId: string;
  ip: string;
  headers: Headers;
  logger: Logger;
}

/** A non-200 answer (or extra headers) from a handler. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** A body already serialized as JSON (hot paths cache the text instead of re-serializing). */
export class JsonText {
  constructor(readonly text: string) {}
}

export interface RateLimitRule {
  /** Counter name, e.g. `brands.bulk`. */
  name: string;
  /** `ip` counts per client address; `principal` per authenticated caller; `organization` per caller's organization (all its keys and users). */
  per: 'ip' | 'principal' | 'organization';
  limit: number;
  windowSeconds: number;
}

export interface EndpointDefinition<Q = any, P = any, B = any> {
  method: HttpMethod;
  /** OpenAPI-style path: `/api/brands/{domain}/rollback`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  auth?: AuthMode;
  /** Minimum standing of an authenticated caller; lower standing gets 403. */
  tier?: Tier;
  query?: v.GenericSchema<unknown, Q>;
  params?: v.GenericSchema<unknown, P>;
  body?: v.GenericSchema<unknown, B>;
  /** Documented success status (default 200) and optional response schema for OpenAPI. */
  success?: { status?: number; description?: string; schema?: v.GenericSchema };
  /** Other documented statuses. */
  errors?: readonly number[];
  rateLimits?: readonly RateLimitRule[];
  /** Answer with an `ETag` (a digest of the body) and 304 to a matching `If-None-Match`. */
  etag?: boolean;
  /** Also served as an MCP tool of this name (snake_case) by the agent-tool host; its arguments are the query, path and body fields. */
  tool?: string;
  handler(request: EndpointRequest<Q, P, B>): Promise<unknown> | unknown;
}

export function defineEndpoint<Q = undefined, P = undefined, B = undefined>(definition: EndpointDefinition<Q, P, B>): EndpointDefinition<Q, P, B> {
  return definition;
}

/** Endpoints contributed by feature plugins; served by the REST host, described by OpenAPI. */
export class EndpointRegistry {
  private readonly endpoints: EndpointDefinition[] = [];
  add(...definitions: EndpointDefinition<any, any, any>[]): void {
    for (const d of definitions) {
      const clash = this.endpoints.find((e) => e.method === d.method && e.path === d.path);
      if (clash) throw new Error(`Endpoint ${d.method} ${d.path} is defined twice`);
      this.endpoints.push(d);
    }
  }
  list(): readonly EndpointDefinition[] {
    return this.endpoints;
  }
}

export const Endpoints = token<EndpointRegistry>('core.endpoints');

// ---- Query-string schemas ---------------------------------------------------------------
// Query values arrive as strings (or string arrays when repeated). These helpers validate the
// raw string and transform it; each also records the JSON Schema of the value it stands for
// (an integer with its bounds, a boolean...), which OpenAPI and MCP tool schemas show instead.

const jsonSchemas = new WeakMap<object, Record<string, unknown>>();

/** The JSON Schema a query helper recorded for `schema`, if any. */
export function declaredJsonSchema(schema: object): Record<string, unknown> | undefined {
  return jsonSchemas.get(schema);
}

function declare<S extends object>(schema: S, json: Record<string, unknown>): S {
  jsonSchemas.set(schema, json);
  return schema;
}

/** A JSON object with any members (never an array or null), documented as `type: object`. */
export function anyObject(message = 'must be an object'): v.GenericSchema<Record<string, unknown>> {
  return declare(
    v.custom<Record<string, unknown>>((x) => !!x && typeof x === 'object' && !Array.isArray(x), message),
    { type: 'object' },
  );
}

/** Integer parameter within [min, max]. */
export function qInt(min: number, max: number): v.GenericSchema<string | undefined, number | undefined>;
export function qInt(min: number, max: number, fallback: number): v.GenericSchema<string | undefined, number>;
export function qInt(min: number, max: number, fallback?: number): v.GenericSchema<string | undefined, number | undefined> {
  const base = v.pipe(
    v.string(),
    v.regex(/^-?\d{1,12}$/, `must be an integer from ${min} to ${max}`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `must be an integer from ${min} to ${max}`),
    v.maxValue(max, `must be an integer from ${min} to ${max}`),
  );
  const schema = fallback === undefined ? v.optional(base) : v.optional(base, String(fallback));
  return declare(schema, { type: 'integer', minimum: min, maximum: max, ...(fallback === undefined ? {} : { default: fallback }) }) as v.GenericSchema<
    string | undefined,
    number | undefined
  >;
}

/** `true` / `false`. */
export function qBool() {
  return declare(
    v.optional(
      v.pipe(
        v.picklist(['true', 'false'], 'must be true or false'),
        v.transform((s) => s === 'true'),
      ),
    ),
    { type: 'boolean' },
  );
}

/** Comma-separated list: trimmed, empty items dropped, at most `max` values, each <= `maxLength`. */
export function qCsv(max = 100, maxLength = 200) {
  const schema = v.optional(
    v.pipe(
      v.string(),
      v.maxLength(max * (maxLength + 1), `has too many values (at most ${max})`),
      v.transform((s) => [
        ...new Set(
          s
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean),
        ),
      ]),
      v.maxLength(max, `accepts at most ${max} values`),
      v.check((xs) => xs.every((x) => x.length <= maxLength), `values must be at most ${maxLength} characters`),
    ),
  );
  return declare(schema, { type: 'string', description: `Comma-separated list, at most ${max} values of at most ${maxLength} characters` });
}

/** Repeatable parameter (`?a=1&a=2`), always an array. */
export function qRepeat(item: v.GenericSchema<string, string> = v.string(), max = 100) {
  return declare(
    v.optional(
      v.pipe(
        v.union([item, v.array(item)]),
        v.transform((x) => (Array.isArray(x) ? x : [x])),
        v.maxLength(max, `accepts at most ${max} values`),
      ),
    ),
    { type: 'array', items: { type: 'string' }, maxItems: max },
  );
}
