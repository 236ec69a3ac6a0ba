#!/usr/bin/env bun
/**
 * Copy the JSON schemas the registry validates with (adagents.json, brand.json and every schema
 * they reference) from the published reference set into plugins/registry-agents/schemas, keeping
 * the validation rules and dropping the prose (titles, descriptions, examples).
 *
 *   bun scripts/vendor-schemas.ts [reference dir]   (default ../shared/reference/schemas/3.1.19)
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const VERSION = '3.1.19';
const source = resolve(process.argv[2] ?? join(import.meta.dir, `../../shared/reference/schemas/${VERSION}`));
const target = join(import.meta.dir, '../plugins/registry-agents/schemas', VERSION);
const ROOTS = ['adagents.json', 'brand.json'];
const PROSE = new Set(['title', 'description', 'examples', '$comment', 'enumDescriptions', 'markdownDescription']);

/** Drop prose keys, except where they are property names inside `properties`. */
function strip(node: unknown, underProperties = false): unknown {
  if (Array.isArray(node)) return node.map((n) => strip(n));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!underProperties && PROSE.has(key) && (typeof value === 'string' || Array.isArray(value) || key === 'enumDescriptions')) continue;
    out[key] = strip(value, key === 'properties' || key === 'definitions' || key === '$defs' || key === 'patternProperties');
  }
  return out;
}

function refsOf(node: unknown, out: Set<string>): void {
  if (Array.isArray(node)) node.forEach((n) => refsOf(n, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(`/schemas/${VERSION}/`)) out.add(value.slice(`/schemas/${VERSION}/`.length).split('#')[0]!);
      else refsOf(value, out);
    }
  }
}

rmSync(target, { recursive: true, force: true });
const queue = [...ROOTS];
const seen = new Set<string>();
while (queue.length) {
  const rel = queue.shift()!;
  if (seen.has(rel)) continue;
  seen.add(rel);
  const schema = JSON.parse(readFileSync(join(source, rel), 'utf8'));
  const refs = new Set<string>();
  refsOf(schema, refs);
  queue.push(...refs);
  const file = join(target, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(strip(schema), null, 1)}\n`);
}
console.log(`vendored ${seen.size} schemas into ${target}`);
