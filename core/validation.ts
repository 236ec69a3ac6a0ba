import * as v from 'valibot';
import { ProtocolError } from './errors.ts';

type PathItem = string | number;

/** `a.b[0].c` for a path, prefixed with the input's name. */
export function fieldPath(path: readonly PathItem[], prefix: string): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${key}` : key;
  }
  return out;
}

/** `a.b[0].c` for a valibot issue path, prefixed with the input's name. */
export function issuePath(issue: v.BaseIssue<unknown>, prefix = ''): string {
  return fieldPath(
    (issue.path ?? []).map((item) => {
      const key = (item as { key?: unknown }).key;
      return typeof key === 'number' ? key : String(key);
    }),
    prefix,
  );
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

/** Deepest nesting of objects and arrays accepted from a caller (protocol payloads stay far below). */
export const MAX_INPUT_DEPTH = 64;

/**
 * NUL (Postgres text cannot hold it) or a lone surrogate (not valid UTF-8, refused by jsonb). Two
 * native scans: a third of the cost of one regular expression with lookarounds, on every string
 * and key of every input.
 */
// String.prototype.isWellFormed (ES2024; the project's TypeScript lib is older).
const unsafeText = (s: string) => s.indexOf('\0') !== -1 || !(s as string & { isWellFormed(): boolean }).isWellFormed();

function textProblem(s: string): string | null {
  if (!unsafeText(s)) return null;
  return s.includes('\0') ? 'must not contain NUL characters' : 'must be well-formed Unicode (lone surrogate)';
}

interface Node {
  value: unknown;
  depth: number;
  key: PathItem | null;
  parent: Node | null;
}

function pathOf(node: Node): PathItem[] {
  const out: PathItem[] = [];
  for (let n: Node | null = node; n && n.key !== null; n = n.parent) out.push(n.key);
  return out.reverse();
}

/**
 * Whether `x` breaks the input rule, without locating the problem (the common, clean case allocates
 * nothing). Recursion stops at `maxDepth`, so a hostile depth cannot exhaust the stack.
 */
function breaksRule(x: unknown, depth: number, maxDepth: number, strings: boolean): boolean {
  if (typeof x === 'string') return strings && unsafeText(x);
  if (x === null || typeof x !== 'object') return false;
  if (depth >= maxDepth) return true;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) if (breaksRule(x[i], depth + 1, maxDepth, strings)) return true;
    return false;
  }
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    if (strings && unsafeText(key)) return true;
    if (breaksRule((x as Record<string, unknown>)[key], depth + 1, maxDepth, strings)) return true;
  }
  return false;
}

/**
 * The one rule for untrusted input, whatever its schema: no string or object key holds NUL or a
 * lone surrogate, and objects/arrays nest at most `maxDepth` levels. Walked without recursion, so
 * a hostile depth cannot exhaust the stack. Returns the first offending field, or null.
 */
export function findUnsafeInput(value: unknown, options: { maxDepth?: number; strings?: boolean } = {}): { path: PathItem[]; problem: string } | null {
  const maxDepth = options.maxDepth ?? MAX_INPUT_DEPTH;
  const strings = options.strings ?? true;
  const stack: Node[] = [{ value, depth: 0, key: null, parent: null }];
  while (stack.length) {
    const node = stack.pop()!;
    const x = node.value;
    if (typeof x === 'string') {
      const problem = strings ? textProblem(x) : null;
      if (problem) return { path: pathOf(node), problem };
      continue;
    }
    if (x === null || typeof x !== 'object') continue;
    if (node.depth >= maxDepth) return { path: pathOf(node), problem: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(x)) {
      for (let i = x.length - 1; i >= 0; i--) stack.push({ value: x[i], depth: node.depth + 1, key: i, parent: node });
      continue;
    }
    const keys = Object.keys(x);
    for (const key of keys) {
      const problem = strings ? textProblem(key) : null;
      if (problem) return { path: pathOf(node), problem: `has a key that ${problem}` };
    }
    // Pushed last-first so members are reported in document order.
    for (let i = keys.length - 1; i >= 0; i--)
      stack.push({ value: (x as Record<string, unknown>)[keys[i]!], depth: node.depth + 1, key: keys[i]!, parent: node });
  }
  return null;
}

/** Raise INVALID_REQUEST naming the field when `value` breaks the input rule (findUnsafeInput). */
export function assertSafeInput(value: unknown, prefix = '', options: { maxDepth?: number; strings?: boolean } = {}): void {
  if (!breaksRule(value, 0, options.maxDepth ?? MAX_INPUT_DEPTH, options.strings ?? true)) return;
  const found = findUnsafeInput(value, options);
  if (!found) return;
  const field = fieldPath(found.path, prefix);
  throw new ProtocolError('INVALID_REQUEST', `${field || 'input'}: ${found.problem}`, { field: field || undefined });
}

/** The error code of a failed input (default INVALID_REQUEST), e.g. INVALID_FORMAT_ID for a bare-string format id. */
export type IssueCode = (issue: v.BaseIssue<unknown>, field: string) => string | undefined;

/**
 * Parse `input` or raise INVALID_REQUEST (or the code `codeOf` gives) naming the failing field.
 * The input rule applies first.
 */
export function parseOrThrow<S extends v.GenericSchema>(schema: S, input: unknown, prefix = '', codeOf?: IssueCode): v.InferOutput<S> {
  assertSafeInput(input, prefix);
  return parseChecked(schema, input, prefix, codeOf);
}

/** parseOrThrow for input that already passed assertSafeInput (one walk for several schemas of one input). */
export function parseChecked<S extends v.GenericSchema>(schema: S, input: unknown, prefix = '', codeOf?: IssueCode): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  const { field, message } = describeIssues(result.issues, prefix);
  const code = (codeOf && result.issues[0] && codeOf(result.issues[0], field)) || 'INVALID_REQUEST';
  throw new ProtocolError(code, message, { field: field || undefined });
}

/** Async variant for schemas with async checks. */
export async function parseOrThrowAsync<S extends v.GenericSchema | v.GenericSchemaAsync>(schema: S, input: unknown, prefix = ''): Promise<v.InferOutput<S>> {
  assertSafeInput(input, prefix);
  const result = await v.safeParseAsync(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  const { field, message } = describeIssues(result.issues, prefix);
  throw new ProtocolError('INVALID_REQUEST', message, { field: field || undefined });
}
