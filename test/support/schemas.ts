import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The published task schemas (draft-07), every file registered by its `$id` so `$ref`s resolve. */
export const SCHEMA_ROOT = join(import.meta.dir, '../../../shared/reference/schemas/3.1.19');

let ajv: Ajv | null = null;
const compiled = new Map<string, ValidateFunction>();

function load(): Ajv {
  if (ajv) return ajv;
  ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.json')) {
        const schema = JSON.parse(readFileSync(path, 'utf8'));
        const id = schema.$id ?? `/schemas/3.1.19/${relative(SCHEMA_ROOT, path)}`;
        if (!ajv!.getSchema(id)) ajv!.addSchema(schema, id);
      }
    }
  };
  walk(SCHEMA_ROOT);
  return ajv;
}

/** Validate `data` against e.g. `signals/get-signals-response.json`; returns readable errors (empty when valid). */
export function schemaErrors(file: string, data: unknown): string[] {
  let validate = compiled.get(file);
  if (!validate) {
    validate = load().getSchema(`/schemas/3.1.19/${file}`);
    if (!validate) throw new Error(`schema ${file} not found`);
    compiled.set(file, validate);
  }
  return validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}
