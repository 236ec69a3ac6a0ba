import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// What the README tells a new user to type must work as typed: PGlite admin commands before the server starts,
// the adcp namespace wherever an AdCP client is pointed at an agent, and only scripts that exist.
const ROOT = join(import.meta.dir, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SCRIPTS = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);

/** The shell blocks, each as its lines (comments dropped). */
const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#')));

/** The section under a `## ` heading. */
const section = (title: string) => {
  const start = README.indexOf(`\n## ${title}\n`);
  expect(start).toBeGreaterThan(-1);
  const end = README.indexOf('\n## ', start + 4);
  return README.slice(start, end < 0 ? undefined : end);
};

test('in every shell block, the admin commands (users included) come before the server starts (PGlite: one process)', () => {
  const withBoth = blocks.filter((b) => b.some((l) => /bun run start\b/.test(l)) && b.some((l) => /bun run admin\b/.test(l)));
  expect(withBoth.length).toBeGreaterThanOrEqual(2);
  for (const b of withBoth) {
    const start = b.findIndex((l) => /bun run start\b/.test(l));
    const lastAdmin = b.length - 1 - [...b].reverse().findIndex((l) => /bun run admin\b/.test(l));
    expect(lastAdmin).toBeLessThan(start);
  }
  // The first session and the trial both create a user who can sign in.
  expect(blocks.filter((b) => b.some((l) => /bun run admin create-user/.test(l)) && b.some((l) => /bun run start\b/.test(l))).length).toBeGreaterThanOrEqual(2);
});

test('the single-box trial starts with PROTOCOL_NAMESPACE=adcp, and the README says where it matters', () => {
  const trial = section('Single-box trial');
  const block = /```sh\n([\s\S]*?)```/.exec(trial)![1]!;
  expect(block.indexOf('export PROTOCOL_NAMESPACE=adcp')).toBeGreaterThan(-1);
  expect(block.indexOf('export PROTOCOL_NAMESPACE=adcp')).toBeLessThan(block.indexOf('bun run start'));
  expect(README).toContain('**AdCP clients: set `PROTOCOL_NAMESPACE=adcp`.**');
  // Every command line that points the adcp CLI at an agent is accompanied by the namespace.
  for (const paragraph of README.split(/\n\n/)) {
    if (/\.bin\/adcp storyboard run|adcp storyboard run http/.test(paragraph)) expect(paragraph).toContain('PROTOCOL_NAMESPACE=adcp');
  }
});

test('every `bun run <script>` the README names exists', () => {
  const named = new Set([...README.matchAll(/bun run ([a-z][a-z-]*)/g)].map((m) => m[1]!));
  const missing = [...named].filter((n) => !SCRIPTS.includes(n));
  expect(missing).toEqual([]);
});
