import YAML from 'yaml';
import { entriesOf, isOptional, jsonSchemaOf } from '../shared/json-schema.ts';
import type { EndpointDefinition } from '../../core/endpoint.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  400: 'Invalid request',
  401: 'Missing or invalid credential',
  403: 'Insufficient standing',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Body too large',
  415: 'Unsupported media type',
  503: 'Service unavailable',
  429: 'Rate limited',
  502: 'Upstream failure',
  504: 'Upstream timeout',
};

const schemaOf = jsonSchemaOf;

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
    // Repeatable parameter (`?a=1&a=2`): an array in exploded form.
    if (json.type === 'array') entry.explode = true;
    if (json.description) entry.description = json.description;
    out.push(entry);
  }
  return out;
}

/** Descriptions of the tags endpoints use (one vocabulary across plugins). */
const TAGS: Record<string, string> = {
  Brands: 'Brand resolution, community brands with revision history, enrichment',
  Properties: 'Property resolution and hosted properties with revision history',
  'Agent discovery': 'The member agent catalog, inventory search, publishers, operators and statistics',
  Lookups: 'Lookups and two-sided authorization checks',
  'Validation tools': 'adagents.json validation and generation',
  Search: 'Search across brands, publishers and properties',
  Crawling: 'Crawl requests',
  'Change feed': 'The cursor-based feed of registry changes',
  Ownership: 'Proof of domain control before community saves',
  Probes: 'Probing agents and publishers',
  Service: 'Health, readiness and this document',
};

export interface OpenApiInfo {
  title: string;
  version: string;
  /** The `servers` entry: the deployment's public URL. */
  serverUrl: string;
  /** OAuth 2.1 security scheme, when the deployment accepts user tokens. */
  oauth?: Record<string, unknown>;
}

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** The service routes every REST host serves besides the endpoint definitions. */
function servicePaths(): Record<string, Record<string, unknown>> {
  const text = (description: string, schema: Record<string, unknown>) => ({ description, content: { 'application/json': { schema } } });
  return {
    '/health': {
      get: {
        operationId: 'getHealth',
        summary: 'Liveness',
        tags: ['Service'],
        security: [],
        responses: { 200: text('The process answers', { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }) },
      },
    },
    '/ready': {
      get: {
        operationId: 'getReady',
        summary: 'Readiness: the database answers',
        tags: ['Service'],
        security: [],
        responses: {
          200: text('Ready', { type: 'object', required: ['status', 'database'], properties: { status: { const: 'ready' }, database: { type: 'string' } } }),
          503: { description: 'The database does not answer', content: errorContent },
        },
      },
    },
    '/openapi/registry.yaml': {
      get: {
        operationId: 'getOpenApi',
        summary: 'This document (also at /.well-known/openapi.yaml, and as JSON at /openapi/registry.json)',
        tags: ['Service'],
        security: [],
        responses: { 200: { description: 'OpenAPI 3.1 YAML', content: { 'application/yaml': { schema: { type: 'string' } } } } },
      },
    },
  };
}

export function buildOpenApi(endpoints: readonly EndpointDefinition[], info: OpenApiInfo) {
  const paths: Record<string, Record<string, unknown>> = servicePaths();
  const schemes = info.oauth ? ['bearerAuth', 'oauth2'] : ['bearerAuth'];
  const credentials = schemes.map((name) => ({ [name]: [] as string[] }));
  const used = new Set<string>(['Service']);
  for (const e of endpoints) {
    const op: Record<string, unknown> = {
      operationId: `${e.method.toLowerCase()}${e.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: e.summary,
    };
    if (e.description) op.description = e.description;
    if (e.tags?.length) {
      op.tags = e.tags;
      for (const t of e.tags) used.add(t);
    }
    const ps = parameters(e);
    if (e.etag)
      ps.push({
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'An ETag of an earlier answer: 304 when unchanged',
        schema: { type: 'string' },
      });
    if (ps.length) op.parameters = ps;
    const hasBody = !!e.body && e.method !== 'GET' && e.method !== 'DELETE';
    if (hasBody) op.requestBody = { required: !isOptional(e.body), content: { 'application/json': { schema: schemaOf(e.body) } } };
    // Public operations say so explicitly; `optional` lists anonymous access as the first alternative.
    op.security = !e.auth || e.auth === 'none' ? [] : e.auth === 'required' ? credentials : [{}, ...credentials];
    const status = e.success?.status ?? 200;
    const responses: Record<string, unknown> = {
      [status]: {
        description: e.success?.description ?? STATUS_TEXT[status] ?? 'Success',
        ...(e.success?.schema ? { content: { 'application/json': { schema: schemaOf(e.success.schema) } } } : {}),
        ...(e.etag ? { headers: { ETag: { description: 'Digest of the body; send it back in If-None-Match', schema: { type: 'string' } } } } : {}),
      },
    };
    if (e.etag) responses[304] = { description: 'Not modified since the ETag sent in If-None-Match' };
    const errors = new Set<number>(e.errors ?? []);
    if (e.query || e.params || e.body) errors.add(400);
    if (e.auth === 'required' || e.auth === 'optional') errors.add(401);
    if (e.tier && e.tier !== 'public') errors.add(403);
    if (e.rateLimits?.length) errors.add(429);
    if (hasBody) {
      errors.add(413);
      errors.add(415);
    }
    for (const code of [...errors].sort()) {
      responses[code] = { description: STATUS_TEXT[code] ?? 'Error', content: errorContent };
    }
    op.responses = responses;
    (paths[e.path] ??= {})[e.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description:
        'Brand and property resolution, agent discovery, authorization checks, the change feed and hosted saves. ' +
        'Public operations need no credential; the others take `Authorization: Bearer` with an organization API key or an OAuth 2.1 access token.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: info.serverUrl }],
    tags: [...used].sort().map((name) => ({ name, description: TAGS[name] ?? name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Organization API key (or an OAuth 2.1 access token)' },
        ...(info.oauth ? { oauth2: info.oauth } : {}),
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'message'],
          properties: {
            error: { type: 'string', description: 'Lower-case error code' },
            message: { type: 'string' },
            field: { type: 'string' },
            retry_after: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
  };
}

export function openApiYaml(doc: unknown): string {
  return YAML.stringify(doc, { aliasDuplicateObjects: false });
}
