import Ajv, { type ValidateFunction, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface SchemaIssue {
  path: string;
  message: string;
}

export interface SchemaValidator {
  adagents(doc: unknown): SchemaIssue[];
  brand(doc: unknown): SchemaIssue[];
}

/** The protocol's adagents.json / brand.json schemas and their references, vendored by scripts/vendor-schemas.ts. */
export const DEFAULT_SCHEMA_DIR = join(import.meta.dir, 'schemas/3.1.19');

function listJson(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listJson(path));
    else if (name.endsWith('.json')) out.push(path);
  }
  return out;
}

const issue = (e: ErrorObject): SchemaIssue => ({
  path: e.instancePath || '/',
  message: `${e.message ?? 'invalid'}${e.params && 'allowedValues' in e.params ? `: ${(e.params.allowedValues as unknown[]).join(', ')}` : ''}`,
});

/**
 * Validate documents against the published adagents.json and brand.json schemas (Ajv, draft-07,
 * every schema of the directory registered by its $id so cross-file $refs resolve). Compiled lazily.
 */
export function createSchemaValidator(dir = DEFAULT_SCHEMA_DIR): SchemaValidator {
  let compiled: { adagents: ValidateFunction; brand: ValidateFunction } | null = null;
  const load = () => {
    if (compiled) return compiled;
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    addFormats(ajv);
    for (const file of listJson(dir)) {
      const schema = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof schema?.$id === 'string' && !ajv.getSchema(schema.$id)) ajv.addSchema(schema);
    }
    const get = (id: string) => {
      const fn = ajv.getSchema(id);
      if (!fn) throw new Error(`schema ${id} not found under ${dir}`);
      return fn;
    };
    compiled = { adagents: get('/schemas/3.1.19/adagents.json'), brand: get('/schemas/3.1.19/brand.json') };
    return compiled;
  };
  const run = (fn: ValidateFunction, doc: unknown) => (fn(doc) ? [] : dedupe((fn.errors ?? []).map(issue)));
  return {
    adagents: (doc) => run(load().adagents, doc),
    brand: (doc) => run(load().brand, doc),
  };
}

function dedupe(issues: SchemaIssue[]): SchemaIssue[] {
  const seen = new Set<string>();
  return issues
    .filter((i) => {
      const key = `${i.path}|${i.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, 50);
}

/** Advisory findings beyond the schema: things that validate but will not work as intended. */
export function adagentsWarnings(doc: unknown): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  if (!doc || typeof doc !== 'object') return out;
  const d = doc as Record<string, any>;
  if (d.authoritative_location) return out;
  if (!d.contact) out.push({ path: '/contact', message: 'no contact: buyers cannot reach the file owner' });
  if (!d.last_updated) out.push({ path: '/last_updated', message: 'no last_updated timestamp' });
  const ids = new Set((Array.isArray(d.properties) ? d.properties : []).map((p: any) => p?.property_id).filter(Boolean));
  const tags = new Set((Array.isArray(d.properties) ? d.properties : []).flatMap((p: any) => (Array.isArray(p?.tags) ? p.tags : [])));
  const urls = new Set<string>();
  (Array.isArray(d.authorized_agents) ? d.authorized_agents : []).forEach((a: any, i: number) => {
    if (typeof a?.url === 'string') {
      if (!a.url.startsWith('https://')) out.push({ path: `/authorized_agents/${i}/url`, message: 'agent URL is not https' });
      if (urls.has(a.url)) out.push({ path: `/authorized_agents/${i}/url`, message: 'agent listed more than once' });
      urls.add(a.url);
    }
    for (const id of Array.isArray(a?.property_ids) ? a.property_ids : []) {
      if (!ids.has(id)) out.push({ path: `/authorized_agents/${i}/property_ids`, message: `property_id ${JSON.stringify(id)} is not defined in properties[]` });
    }
    if (a?.authorization_type === 'property_tags' && Array.isArray(a.property_tags) && !a.property_tags.some((t: string) => tags.has(t))) {
      out.push({ path: `/authorized_agents/${i}/property_tags`, message: 'no property carries any of these tags' });
    }
    if (!a?.delegation_type && a?.authorization_type !== 'signal_ids' && a?.authorization_type !== 'signal_tags') {
      out.push({ path: `/authorized_agents/${i}/delegation_type`, message: 'no delegation_type: the operator side of authorization cannot be verified' });
    }
  });
  return out.slice(0, 50);
}
