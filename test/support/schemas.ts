import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REFERENCE } from './reference.ts';

/**
 * The published AdCP task schemas (draft-07) of both versions that matter: 3.0.6 (what deployed
 * official clients validate responses against) and 3.1.19 (current). Every file is registered by
 * its `$id` so `$ref`s resolve within its version.
 */
export const SCHEMA_VERSIONS = ['3.0.6', '3.1.19'] as const;
export type SchemaVersion = (typeof SCHEMA_VERSIONS)[number];
export const schemaRoot = (version: SchemaVersion) => join(REFERENCE, 'schemas', version);
/** The current version's directory (kept for callers that read files directly). */
export const SCHEMA_ROOT = schemaRoot('3.1.19');

const validators = new Map<SchemaVersion, Ajv>();
const compiled = new Map<string, ValidateFunction>();

function load(version: SchemaVersion): Ajv {
  let ajv = validators.get(version);
  if (ajv) return ajv;
  ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  const root = schemaRoot(version);
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.json')) {
        const schema = JSON.parse(readFileSync(path, 'utf8'));
        const id = schema.$id ?? `/schemas/${version}/${relative(root, path)}`;
        if (!ajv!.getSchema(id)) ajv!.addSchema(schema, id);
      }
    }
  };
  walk(root);
  validators.set(version, ajv);
  return ajv;
}

/** Errors of `data` against e.g. `signals/get-signals-response.json` of one version (empty when valid). */
export function schemaErrors(file: string, data: unknown, version: SchemaVersion = '3.1.19'): string[] {
  const key = `${version}/${file}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = load(version).getSchema(`/schemas/${version}/${file}`);
    if (!validate) throw new Error(`schema ${key} not found`);
    compiled.set(key, validate);
  }
  return validate(data) ? [] : (validate.errors ?? []).map((e) => `${version} ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

/**
 * The default check for every agent answer in the `adcp` namespace: errors against both versions
 * (empty when `data` satisfies 3.0.6 and 3.1.19). A file missing from one version is checked
 * against the versions that have it.
 */
export function bothVersionsErrors(file: string, data: unknown): string[] {
  const present = SCHEMA_VERSIONS.filter((v) => {
    try {
      return statSync(join(schemaRoot(v), file)).isFile();
    } catch {
      return false;
    }
  });
  if (present.length === 0) throw new Error(`schema ${file} exists in no version`);
  return present.flatMap((v) => schemaErrors(file, data, v));
}
