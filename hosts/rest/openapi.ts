import * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';
import YAML from 'yaml';
import type { EndpointDefinition } from '../../core/endpoint.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content', 400: 'Invalid request', 401: 'Missing or invalid credential',
  403: 'Insufficient standing', 404: 'Not found', 409: 'Conflict', 410: 'Gone', 413: 'Body too large', 415: 'Unsupported media type',
  429: 'Rate limited', 502: 'Upstream failure', 504: 'Upstream timeout',
};

/**
 * JSON Schema of the *input* side of a valibot schema. `errorMode: 'ignore'` keeps the
 * parameter when a pipe holds a transform (otherwise it would silently vanish from the spec).
 */
function schemaOf(schema: v.GenericSchema | undefined): Record<string, unknown> {
  if (!schema) return { type: 'string' };
  const out = toJsonSchema(schema as any, { errorMode: 'ignore', typeMode: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/** The entries of an object schema (unwrapping optional/pipe), or null. */
function entriesOf(schema: unknown): Record<string, v.GenericSchema> | null {
  let s: any = schema;
  while (s && !s.entries && (s.wrapped || s.pipe)) s = s.wrapped ?? s.pipe?.[0];
  return s?.entries ?? null;
}

function isOptional(schema: any): boolean {
  return schema?.type === 'optional' || schema?.type === 'nullish' || schema?.type === 'exact_optional';
}

function parameters(e: EndpointDefinition): unknown[] {
  const out: unknown[] = [];
  const params = entriesOf(e.params) ?? {};
  for (const match of e.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)) {
    const name = match[1]!;
    out.push({ name, in: 'path', required: true, schema: schemaOf(params[name]) });
  }
  for (const [name, schema] of Object.entries(entriesOf(e.query) ?? {})) {
    const entry: Record<string, unknown> = { name, in: 'query', required: !isOptional(schema), schema: schemaOf(schema) };
    const json = entry.schema as Record<string, unknown>;
    if (json.anyOf && JSON.stringify(json).includes('"array"')) {
      // Repeatable parameter: documented as an array in exploded form.
      entry.schema = { type: 'array', items: { type: 'string' } };
      entry.explode = true;
    }
    if (json.description) entry.description = json.description;
    out.push(entry);
  }
  return out;
}

export function buildOpenApi(endpoints: readonly EndpointDefinition[], info: { title: string; version: string; serverUrl?: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of endpoints) {
    const op: Record<string, unknown> = {
      operationId: `${e.method.toLowerCase()}${e.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: e.summary,
    };
    if (e.description) op.description = e.description;
    if (e.tags?.length) op.tags = e.tags;
    const ps = parameters(e);
    if (ps.length) op.parameters = ps;
    if (e.body) op.requestBody = { required: !isOptional(e.body), content: { 'application/json': { schema: schemaOf(e.body) } } };
    if (e.auth && e.auth !== 'none') op.security = e.auth === 'required' ? [{ bearerAuth: [] }] : [{}, { bearerAuth: [] }];
    const status = e.success?.status ?? 200;
    const responses: Record<string, unknown> = {
      [status]: {
        description: e.success?.description ?? STATUS_TEXT[status] ?? 'Success',
        ...(e.success?.schema ? { content: { 'application/json': { schema: schemaOf(e.success.schema) } } } : {}),
      },
    };
    const errors = new Set<number>(e.errors ?? []);
    if (e.query || e.params || e.body) errors.add(400);
    if (e.auth === 'required' || e.auth === 'optional') errors.add(401);
    if (e.tier && e.tier !== 'public') errors.add(403);
    if (e.rateLimits?.length) errors.add(429);
    for (const code of [...errors].sort()) {
      responses[code] = { description: STATUS_TEXT[code] ?? 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    op.responses = responses;
    (paths[e.path] ??= {})[e.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Organization API key' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'string' }, message: { type: 'string' }, retry_after: { type: 'integer' } },
        },
      },
    },
  };
}

export function openApiYaml(doc: unknown): string {
  return YAML.stringify(doc, { aliasDuplicateObjects: false });
}
