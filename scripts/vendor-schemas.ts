#!/usr/bin/env bun
/**
 * Copy the published AdCP JSON schemas a deployment needs at run time into the repository, keeping
 * the validation rules and dropping the prose (titles, descriptions, examples), so a deployment
 * reads no reference data at run time:
 *
 * - lib/registry-documents/schemas/3.1.19: adagents.json, brand.json and every schema they
 *   reference, file for file (the registry validates documents with them);
 * - lib/adcp/schemas/3.1.19: the task request schemas tools publish as their input schema,
 *   each dereferenced into one self-contained file (clients do not resolve remote $refs);
 * - lib/adcp/schemas/error-codes.json: the standard error codes of 3.0.6 and 3.1.19.
 *
 *   bun scripts/vendor-schemas.ts [reference dir]   (default test/fixtures/adcp/schemas)
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { exitOnHelp } from '../lib/cli.ts';

exitOnHelp(`usage: bun scripts/vendor-schemas.ts [reference dir]   (default test/fixtures/adcp/schemas)

Copies the published AdCP JSON schemas a deployment needs at run time into lib/registry-documents/schemas and
lib/adcp/schemas, without their prose.`);

const VERSION = '3.1.19';
const VERSIONS = ['3.0.6', '3.1.19'] as const;
const reference = resolve(process.argv[2] ?? join(import.meta.dir, '../test/fixtures/adcp/schemas'));
const source = join(reference, VERSION);
const PROSE = new Set(['title', 'description', 'examples', '$comment', 'enumDescriptions', 'enumMetadata', 'markdownDescription', 'notes']);
/** Request schemas published as tool input schemas (TaskDefinition.requestSchema names them). */
const REQUESTS = [
  'signals/get-signals-request.json',
  'signals/activate-signal-request.json',
  'protocol/get-adcp-capabilities-request.json',
  'protocol/get-task-status-request.json',
  'media-buy/sync-audiences-request.json',
  'media-buy/sync-event-sources-request.json',
  'media-buy/log-event-request.json',
  'media-buy/provide-performance-feedback-request.json',
  'media-buy/sync-catalogs-request.json',
  'governance/sync-plans-request.json',
  'governance/check-governance-request.json',
  'governance/report-plan-outcome-request.json',
  'governance/get-plan-audit-logs-request.json',
  'brand/get-brand-identity-request.json',
  'brand/get-rights-request.json',
  'brand/acquire-rights-request.json',
  'brand/update-rights-request.json',
  'brand/creative-approval-request.json',
  'brand/search-brands-request.json',
  'brand/verify-brand-claim-request.json',
  'brand/verify-brand-claims-request.json',
  'account/sync-governance-request.json',
  'sponsored-intelligence/si-get-offering-request.json',
  'sponsored-intelligence/si-initiate-session-request.json',
  'sponsored-intelligence/si-send-message-request.json',
  'sponsored-intelligence/si-terminate-session-request.json',
  'property/create-property-list-request.json',
  'property/get-property-list-request.json',
  'property/update-property-list-request.json',
  'property/delete-property-list-request.json',
  'property/list-property-lists-request.json',
  'property/validate-property-delivery-request.json',
  'collection/create-collection-list-request.json',
  'collection/get-collection-list-request.json',
  'collection/update-collection-list-request.json',
  'collection/delete-collection-list-request.json',
  'collection/list-collection-lists-request.json',
  'content-standards/create-content-standards-request.json',
  'content-standards/get-content-standards-request.json',
  'content-standards/update-content-standards-request.json',
  'content-standards/list-content-standards-request.json',
  'content-standards/calibrate-content-request.json',
  'content-standards/validate-content-delivery-request.json',
  'content-standards/get-media-buy-artifacts-request.json',
  'account/sync-governance-request.json',
];

const read = (dir: string, rel: string) => JSON.parse(readFileSync(join(dir, rel), 'utf8'));
const write = (file: string, value: unknown) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 1)}\n`);
};

/** Drop prose keys, except where they are property names inside `properties`. */
function strip(node: unknown, underProperties = false): unknown {
  if (Array.isArray(node)) return node.map((n) => strip(n));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!underProperties && PROSE.has(key) && (typeof value === 'string' || Array.isArray(value) || typeof value === 'object')) continue;
    out[key] = strip(value, key === 'properties' || key === 'definitions' || key === '$defs' || key === 'patternProperties');
  }
  return out;
}

const relOf = (ref: string) => ref.slice(`/schemas/${VERSION}/`.length).split('#')[0]!;

function refsOf(node: unknown, out: Set<string>): void {
  if (Array.isArray(node)) {
    for (const n of node) refsOf(n, out);
  } else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(`/schemas/${VERSION}/`)) out.add(relOf(value));
      else refsOf(value, out);
    }
  }
}

/** The node a local JSON pointer (`#/$defs/x`) names inside `root`. */
function pointer(root: unknown, ref: string): unknown {
  let node: any = root;
  for (const part of ref.slice(2).split('/')) node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (node === undefined) throw new Error(`unresolved local $ref ${ref}`);
  return node;
}

/**
 * Inline every `$ref` (the request schemas reference no schema recursively; a cycle is an error),
 * remote ones (`/schemas/3.1.19/...`) and local ones (`#/...`, within the file that holds them),
 * and drop what only matters to generators: `$id`/`$schema` of inlined parts, `x-*` annotations
 * and OpenAPI's `discriminator`.
 */
function dereference(node: unknown, root: unknown, stack: readonly string[] = []): unknown {
  if (Array.isArray(node)) return node.map((n) => dereference(n, root, stack));
  if (!node || typeof node !== 'object') return node;
  const obj = node as Record<string, unknown>;
  if (typeof obj.$ref === 'string') {
    const local = obj.$ref.startsWith('#/');
    const key = local ? `${stack[stack.length - 1] ?? ''}${obj.$ref}` : relOf(obj.$ref);
    if (stack.includes(key)) throw new Error(`recursive $ref ${[...stack, key].join(' -> ')}`);
    const { $ref: _ref, ...siblings } = obj;
    const file = local ? root : read(source, key);
    const target = dereference(local ? pointer(root, obj.$ref) : file, file, [...stack, key]) as Record<string, unknown>;
    // Siblings of $ref (draft-07 ignores them for validation) keep only non-prose meaning: merge them.
    return Object.keys(siblings).length ? { allOf: [target], ...(dereference(siblings, root, stack) as object) } : target;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (key === '$id' || key === '$schema' || key === 'discriminator' || key === '$defs' || key === 'definitions' || key.startsWith('x-')) continue;
    out[key] = dereference(value, root, stack);
  }
  return out;
}

// Registry documents, file for file.
const registryTarget = join(import.meta.dir, '../lib/registry-documents/schemas', VERSION);
rmSync(registryTarget, { recursive: true, force: true });
const queue = ['adagents.json', 'brand.json'];
const seen = new Set<string>();
while (queue.length) {
  const rel = queue.shift()!;
  if (seen.has(rel)) continue;
  seen.add(rel);
  const schema = read(source, rel);
  const refs = new Set<string>();
  refsOf(schema, refs);
  queue.push(...refs);
  write(join(registryTarget, rel), strip(schema));
}
console.log(`vendored ${seen.size} registry document schemas into ${registryTarget}`);

// Task request schemas, dereferenced.
const adcpTarget = join(import.meta.dir, '../lib/adcp/schemas');
rmSync(adcpTarget, { recursive: true, force: true });
for (const rel of REQUESTS) {
  const file = read(source, rel);
  const schema = strip(dereference(file, file, [rel])) as Record<string, unknown>;
  write(join(adcpTarget, VERSION, rel), { $schema: 'http://json-schema.org/draft-07/schema#', ...schema });
}
const codes = Object.fromEntries(VERSIONS.map((v) => [v, read(join(reference, v), 'enums/error-code.json').enum as string[]]));
write(join(adcpTarget, 'error-codes.json'), codes);
console.log(`vendored ${REQUESTS.length} request schemas and the error codes of ${VERSIONS.join(', ')} into ${adcpTarget}`);
