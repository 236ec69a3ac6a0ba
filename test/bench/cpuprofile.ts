#!/usr/bin/env bun
/**
 * `bun test/bench/cpuprofile.ts <file.cpuprofile> [top]`: where a CPU profile (bun --cpu-prof,
 * Chrome format) spent its samples: self time by function and by file, and the functions whose
 * subtree (inclusive time) is largest, in % of all samples (idle excluded).
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, topArg = '25'] = process.argv.slice(2);
if (!file) throw new Error('usage: cpuprofile.ts <file.cpuprofile> [top]');
const top = Number(topArg);
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
for (const s of profile.samples) self.set(s, (self.get(s) ?? 0) + 1);
const short = (url: string) =>
  url
    .replace(/^.*\/(node_modules\/)/, '$1')
    .replace(/^.*\/wt-[^/]+\//, '')
    .replace(/^file:\/\//, '');
const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const idle = (n: Node) =>
  ['(idle)', '(program)', '(garbage collector)'].includes(n.callFrame.functionName) && n.callFrame.functionName !== '(garbage collector)';
let total = 0;
const selfBy = new Map<string, number>();
const fileBy = new Map<string, number>();
const inclBy = new Map<string, number>();
for (const [id, count] of self) {
  const n = byId.get(id)!;
  if (idle(n)) continue;
  total += count;
  selfBy.set(label(n), (selfBy.get(label(n)) ?? 0) + count);
  const f = short(n.callFrame.url) || n.callFrame.functionName;
  fileBy.set(f, (fileBy.get(f) ?? 0) + count);
  // Inclusive: every distinct frame on the stack gets the sample once.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (!seen.has(l)) {
      seen.add(l);
      inclBy.set(l, (inclBy.get(l) ?? 0) + count);
    }
  }
}
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, c] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((c / total) * 100).toFixed(1).padStart(6)}%  ${k}`);
};
console.log(`${total} busy samples`);
print('self time by function', selfBy);
print('self time by file', fileBy);
print('inclusive time by function', inclBy);
