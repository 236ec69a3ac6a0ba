import * as v from 'valibot';
import { ProtocolError } from './errors.ts';

/** `a.b[0].c` for a valibot issue path, prefixed with the input's name. */
export function issuePath(issue: v.BaseIssue<unknown>, prefix = ''): string {
  let out = prefix;
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key;
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** The first issue, phrased for humans: `query.limit: must be an integer from 1 to 200`. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[], prefix = ''): { field: string; message: string } {
  const issue = issues[0];
  if (!issue) return { field: prefix, message: `${prefix || 'input'}: invalid` };
  const field = issuePath(issue, prefix);
  let message = issue.message;
  if (issue.kind === 'schema' && issue.received === 'undefined') message = 'is required';
  return { field, message: `${field || 'input'}: ${message}` };
}

/** Parse `input` or raise INVALID_REQUEST naming the failing field. */
export function parseOrThrow<S extends v.GenericSchema>(schema: S, input: unknown, prefix = ''): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  const { field, message } = describeIssues(result.issues, prefix);
  throw new ProtocolError('INVALID_REQUEST', message, { field: field || undefined });
}

/** Async variant for schemas with async checks. */
export async function parseOrThrowAsync<S extends v.GenericSchema | v.GenericSchemaAsync>(
  schema: S,
  input: unknown,
  prefix = '',
): Promise<v.InferOutput<S>> {
  const result = await v.safeParseAsync(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  const { field, message } = describeIssues(result.issues, prefix);
  throw new ProtocolError('INVALID_REQUEST', message, { field: field || undefined });
}
