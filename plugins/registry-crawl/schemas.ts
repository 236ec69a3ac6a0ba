import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The published JSON schemas (adagents.json, brand.json and everything they reference). */
export const SCHEMA_DIR = join(import.meta.dir, '../../../shared/reference/schemas/3.1.19');

export interface SchemaIssue {
  path: string;
  message: string;
}

export interface DocumentValidator {
  adagents(doc: unknown): SchemaIssue[];
  brand(doc: unknown): SchemaIssue[];
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsonFiles(path);
    return name.endsWith('.json') ? [path] : [];
  });
}

const toIssue = (e: ErrorObject): SchemaIssue => ({ path: e.instancePath || '/', message: e.message ?? 'invalid' });

/**
 * Ajv validators for adagents.json and brand.json. Every schema file is registered under its
 * `$id` so cross-file `$ref`s resolve; compiled on first use (a few hundred ms), then cached.
 */
export function createDocumentValidator(dir = SCHEMA_DIR): DocumentValidator {
  let compiled: { adagents: ValidateFunction; brand: ValidateFunction } | null = null;
  const load = () => {
    if (compiled) return compiled;
    const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
    addFormats(ajv);
    for (const file of jsonFiles(dir)) {
      const schema = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof schema?.$id === 'string' && !ajv.getSchema(schema.$id)) ajv.addSchema(schema);
    }
    const get = (file: string) => {
      const id = JSON.parse(readFileSync(join(dir, file), 'utf8')).$id as string;
      const fn = ajv.getSchema(id);
      if (!fn) throw new Error(`schema ${id} not found under ${dir}`);
      return fn;
    };
    compiled = { adagents: get('adagents.json'), brand: get('brand.json') };
    return compiled;
  };
  const run = (fn: ValidateFunction, doc: unknown) => (fn(doc) ? [] : (fn.errors ?? []).slice(0, 20).map(toIssue));
  return {
    adagents: (doc) => run(load().adagents, doc),
    brand: (doc) => run(load().brand, doc),
  };
}
