import type * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';
import { declaredJsonSchema } from '../../core/endpoint.ts';

export type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema (2020-12) of a valibot schema's input side. Query helpers (qInt, qBool, ...) show the
 * value they stand for (an integer with bounds rather than its digit string). `errorMode: 'ignore'`
 * keeps a field whose pipe holds a transform (otherwise it would silently vanish).
 */
export function jsonSchemaOf(schema: v.GenericSchema | undefined): JsonSchema {
  if (!schema) return { type: 'string' };
  const declared = declaredJsonSchema(schema);
  if (declared) return { ...declared };
  const out = toJsonSchema(schema as any, {
    errorMode: 'ignore',
    typeMode: 'input',
    target: 'draft-2020-12',
    overrideSchema: (context) => (declaredJsonSchema(context.valibotSchema) as any) ?? undefined,
  }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** The entries of an object schema (unwrapping optional/pipe), or null. */
export function entriesOf(schema: unknown): Record<string, v.GenericSchema> | null {
  let s: any = schema;
  while (s && !s.entries && (s.wrapped || s.pipe)) s = s.wrapped ?? s.pipe?.[0];
  return s?.entries ?? null;
}

export function isOptional(schema: any): boolean {
  return schema?.type === 'optional' || schema?.type === 'nullish' || schema?.type === 'exact_optional';
}
