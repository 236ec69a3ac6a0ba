import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

/** One broken layout rule, with where it happens. */
export interface Violation {
  file: string;
  rule: string;
  detail: string;
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

/** Top-level area and, for plugins, the plugin folder: `plugins/tasks/store.ts` -> ['plugins', 'tasks']. */
function area(path: string): [string, string | undefined] {
  const parts = path.split(sep);
  return [parts[0]!, parts[0] === 'plugins' ? parts[1] : undefined];
}

function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push((m[1] ?? m[2] ?? m[3])!);
  return out;
}

/**
 * The layout rules of ARCHITECTURE.md, checked on a source tree:
 * - a plugin imports only `core/`, `lib/` and its own folder;
 * - `lib/` imports only `core/` and `lib/`; hosts import no plugin (nor config); `core/` imports nothing outside `core/`;
 * - every table is created by exactly one plugin's migrations, and no plugin's code names a table another plugin owns;
 * - lib/ defines no plugin, migration, route, job or port binding, and neither lib/ nor scripts/ name a plugin's table.
 */
export function boundaryViolations(root: string): Violation[] {
  const violations: Violation[] = [];
  const files = ['core', 'lib', 'plugins', 'hosts', 'scripts'].flatMap((d) => {
    try {
      return walk(join(root, d)).map((f) => relative(root, f));
    } catch {
      return [];
    }
  });

  for (const file of files.filter((f) => f.endsWith('.ts') && !f.startsWith(`scripts${sep}`))) {
    const [from, plugin] = area(file);
    for (const spec of importsOf(readFileSync(join(root, file), 'utf8'))) {
      if (!spec.startsWith('.')) continue; // packages: not a layout question
      const target = normalize(join(dirname(file), spec));
      const [to, targetPlugin] = area(target);
      const allowed =
        from === 'plugins'
          ? to === 'core' || to === 'lib' || (to === 'plugins' && targetPlugin === plugin)
          : from === 'lib'
            ? to === 'core' || to === 'lib'
            : from === 'hosts'
              ? to !== 'plugins' && to !== 'config'
              : to === 'core';
      if (!allowed) violations.push({ file, rule: `${from} -> ${to}`, detail: `imports ${spec}` });
    }
  }

  // Migration versions are unique per folder (two branches can each add "003_").
  const versions = new Map<string, string>();
  for (const file of files.filter((f) => f.includes(`${sep}migrations${sep}`) && f.endsWith('.sql'))) {
    const version = /^(\d+)_/.exec(file.split(sep).pop()!)?.[1];
    if (!version) continue;
    const key = `${dirname(file)}#${Number(version)}`;
    const other = versions.get(key);
    if (other) violations.push({ file, rule: 'one migration per version', detail: `version ${Number(version)} is also ${other}` });
    else versions.set(key, file);
  }

  // Table ownership: CREATE TABLE in a plugin's migrations makes the plugin its owner.
  const owner = new Map<string, string>();
  for (const file of files.filter((f) => f.startsWith(`plugins${sep}`) && f.includes(`${sep}migrations${sep}`) && f.endsWith('.sql'))) {
    const [, plugin] = area(file);
    for (const m of readFileSync(join(root, file), 'utf8').matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_][a-z0-9_]*)"?/gi)) {
      const table = m[1]!.toLowerCase();
      const other = owner.get(table);
      if (other && other !== plugin) violations.push({ file, rule: 'one owner per table', detail: `${table} is also created by ${other}` });
      else owner.set(table, plugin!);
    }
  }
  // SQL naming a table: a plugin names only its own; lib/ (stateless) and scripts/ (operator commands, which go
  // through the owning plugin's functions) name none.
  for (const file of files.filter((f) => /^(plugins|lib|scripts)[\\/]/.test(f) && f.endsWith('.ts'))) {
    const [from, plugin] = area(file);
    const text = readFileSync(join(root, file), 'utf8');
    for (const [table, own] of owner) {
      if (own === plugin) continue;
      if (new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE|to_regclass\\(')\\s*"?${table}\\b`, 'i').test(text)) {
        const rule = from === 'plugins' ? 'table owned by another plugin' : `${from} names a plugin's table`;
        violations.push({ file, rule, detail: `${table} belongs to ${own}` });
      }
    }
  }

  // lib/ is stateless: no plugin definitions, migrations, routes or jobs.
  for (const file of files.filter((f) => f.startsWith(`lib${sep}`))) {
    if (file.endsWith('.sql')) violations.push({ file, rule: 'lib holds no migrations', detail: 'a .sql file' });
    if (!file.endsWith('.ts')) continue;
    const text = readFileSync(join(root, file), 'utf8');
    for (const [pattern, what] of [
      [/\bdefinePlugin\(/, 'defines a plugin'],
      [/\bloadMigrations\(/, 'loads migrations'],
      [/\.(?:scheduler\.add|provide)\(/, 'registers a job or a port'],
      [/\b(?:http|endpoints)\.add\(/, 'registers routes'],
    ] as const) {
      if (pattern.test(text)) violations.push({ file, rule: 'lib is stateless', detail: what });
    }
  }
  return violations;
}

/**
 * Import cycles inside one plugin folder (type-only imports included: a circle of files is one unit that
 * cannot be split or owned apart). Each strongly connected set of files is reported once, its files sorted.
 */
export function importCycles(root: string): Violation[] {
  let files: string[];
  try {
    files = walk(join(root, 'plugins'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => relative(root, f));
  } catch {
    return [];
  }
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const [, plugin] = area(file);
    const targets = importsOf(readFileSync(join(root, file), 'utf8'))
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => normalize(join(dirname(file), spec)))
      .filter((t) => known.has(t) && area(t)[1] === plugin);
    edges.set(file, [...new Set(targets)]);
  }
  // Tarjan's strongly connected components: every component of more than one file (or a file importing
  // itself) is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const to of edges.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let f: string;
      do {
        f = stack.pop()!;
        onStack.delete(f);
        component.push(f);
      } while (f !== file);
      if (component.length > 1 || edges.get(file)!.includes(file)) components.push(component.sort());
    }
  };
  for (const file of [...files].sort()) if (!index.has(file)) visit(file);
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!)).map((c) => ({ file: c[0]!, rule: 'no import cycle in a plugin', detail: `${c.join(' <-> ')}` }));
}

/** Test files whose `expect(...).rejects` / `.resolves` is not awaited (such an assertion can never fail the test). */
export function unawaitedAssertions(root: string): Violation[] {
  const out: Violation[] = [];
  for (const file of walk(join(root, 'test')).filter((f) => f.endsWith('.ts'))) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
        if (/(?<!await |return |=> )\bexpect\([^;]*\)\s*\.(rejects|resolves)\b/.test(line)) {
          out.push({ file: `${relative(root, file)}:${i + 1}`, rule: 'await async assertions', detail: line.trim() });
        }
      });
  }
  return out;
}
