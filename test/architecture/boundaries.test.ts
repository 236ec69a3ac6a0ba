import { afterAll, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { boundaryViolations, importCycles, unawaitedAssertions } from './boundaries.ts';

const ROOT = join(import.meta.dir, '../..');

test('the tree keeps the layout rules: plugin, lib, host and core imports; one owner per table', () => {
  expect(boundaryViolations(ROOT)).toEqual([]);
});

test('no plugin folder has files importing each other in a circle', () => {
  expect(importCycles(ROOT)).toEqual([]);
});

test('every async assertion in the tests is awaited', () => {
  expect(unawaitedAssertions(ROOT)).toEqual([]);
});

// The checker itself: a tree that breaks each rule is reported, rule by rule.
const scratch = mkdtempSync(join(tmpdir(), 'boundaries-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const write = (path: string, text: string) => {
  mkdirSync(dirname(join(scratch, path)), { recursive: true });
  writeFileSync(join(scratch, path), text);
};

test('a plugin importing another plugin, a host importing a plugin, lib or core reaching out, and a foreign table are all reported', () => {
  write('core/ok.ts', "import { x } from './ports/x.ts';\n");
  write('core/bad.ts', "import { y } from '../lib/y.ts';\n");
  write('lib/y.ts', "import { p } from '../plugins/a/index.ts';\nexport const y = p;\n");
  write('plugins/a/index.ts', "import { b } from '../b/store.ts';\nimport { c } from '../../core/ok.ts';\nimport { own } from './own.ts';\n");
  write('plugins/a/deep/own.ts', "import { s } from '../../b/store.ts';\nimport { o } from '../index.ts';\nconst q = sql`SELECT * FROM b_things`;\n");
  write('plugins/b/store.ts', 'export const b = 1;\n');
  write('plugins/b/migrations/001_things.sql', 'CREATE TABLE b_things (id int);\n');
  write('hosts/rest.ts', "import { b } from '../plugins/b/store.ts';\n");
  const found = boundaryViolations(scratch).map((v) => `${v.file} ${v.rule} ${v.detail}`);
  expect(found).toEqual(
    [
      'core/bad.ts core -> lib imports ../lib/y.ts',
      'lib/y.ts lib -> plugins imports ../plugins/a/index.ts',
      'plugins/a/index.ts plugins -> plugins imports ../b/store.ts',
      'plugins/a/deep/own.ts plugins -> plugins imports ../../b/store.ts',
      'hosts/rest.ts hosts -> plugins imports ../plugins/b/store.ts',
      'plugins/a/deep/own.ts table owned by another plugin b_things belongs to b',
    ].sort((x, y) => found.indexOf(x) - found.indexOf(y)),
  );
  expect(found).toHaveLength(6);
});

test('two migrations with one version in a folder are reported', () => {
  write('plugins/b/migrations/001_again.sql', 'ALTER TABLE b_things ADD COLUMN x int;\n');
  const found = boundaryViolations(scratch).filter((v) => v.rule === 'one migration per version');
  expect(found).toHaveLength(1);
  expect(found[0]!.detail).toContain('version 1 is also plugins/b/migrations/001_things.sql');
});

test("lib defining a plugin or naming a table, and a script writing a plugin's table, are reported", () => {
  write('lib/kit/plugin.ts', "import { definePlugin } from '../../core/plugin.ts';\nexport const p = definePlugin({ name: 'kit' });\n");
  write('lib/kit/migrations/001_kit.sql', 'CREATE TABLE kit_things (id int);\n');
  write('lib/kit/store.ts', 'export const q = sql`UPDATE b_things SET id = 2`;\n');
  write('scripts/fix.ts', 'await db.query(sql`DELETE FROM b_things`); await db.query(sql`INSERT INTO b_things VALUES (1)`);\n');
  const found = boundaryViolations(scratch)
    .filter((v) => v.file.startsWith('lib/kit') || v.file.startsWith('scripts/'))
    .map((v) => `${v.file} ${v.rule} ${v.detail}`)
    .sort();
  expect(found).toEqual([
    'lib/kit/migrations/001_kit.sql lib holds no migrations a .sql file',
    'lib/kit/plugin.ts lib is stateless defines a plugin',
    "lib/kit/store.ts lib names a plugin's table b_things belongs to b",
    "scripts/fix.ts scripts names a plugin's table b_things belongs to b",
  ]);
});

test('an import cycle inside a plugin folder is reported once, type-only imports included; imports across plugins are not followed', () => {
  write('plugins/c/index.ts', "import { a } from './a.ts';\n");
  write('plugins/c/a.ts', "import { b } from './deep/b.ts';\nexport const a = 1;\n");
  write('plugins/c/deep/b.ts', "import type { C } from '../c.ts';\nexport const b = 1;\n");
  write('plugins/c/c.ts', "import { a } from './a.ts';\nexport type C = number;\n");
  write('plugins/c/self.ts', "export { s } from './self.ts';\n");
  write('plugins/d/x.ts', "import { y } from '../c/index.ts';\n");
  write('plugins/c/ok.ts', "import { x } from '../d/x.ts';\nimport { a } from './a.ts';\n");
  const found = importCycles(scratch).map((v) => `${v.file}: ${v.detail}`);
  expect(found).toEqual(['plugins/c/a.ts: plugins/c/a.ts <-> plugins/c/c.ts <-> plugins/c/deep/b.ts', 'plugins/c/self.ts: plugins/c/self.ts']);
});
