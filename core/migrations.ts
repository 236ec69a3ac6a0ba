import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Migration } from './ports/database.ts';

/** Load `NNN_name.sql` files of a plugin's migrations folder, ordered by version. */
export function loadMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_[\w-]+\.sql$/.test(f))
    .map((f) => {
      const [, version, name] = /^(\d+)_([\w-]+)\.sql$/.exec(f)!;
      return { version: Number(version), name: name!, sql: readFileSync(join(dir, f), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
}

/** What the shared runner needs from an open transaction. */
export interface MigrationSession {
  /** Run a multi-statement script without parameters. */
  exec(script: string): Promise<void>;
  /** Run one statement with parameters. */
  rows<T>(text: string, values: unknown[]): Promise<T[]>;
}

/** Advisory-lock key shared by every instance: migrations of one database run one at a time. */
const MIGRATION_LOCK = 0x61646370; // arbitrary constant

/**
 * Apply the owner's pending migrations inside the caller's transaction. The advisory lock makes
 * a second instance wait, then find the versions already applied and do nothing.
 */
export async function runMigrations(session: MigrationSession, owner: string, migrations: readonly Migration[]): Promise<string[]> {
  const versions = new Set<number>();
  for (const m of migrations) {
    if (!Number.isInteger(m.version) || m.version < 1) throw new Error(`Migration ${owner}/${m.name}: version must be a positive integer`);
    if (versions.has(m.version)) throw new Error(`Migration ${owner}: version ${m.version} appears twice`);
    versions.add(m.version);
  }
  await session.rows('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  await session.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    owner text NOT NULL,
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, version)
  )`);
  const applied = new Set(
    (await session.rows<{ version: number }>('SELECT version FROM schema_migrations WHERE owner = $1', [owner])).map((r) => Number(r.version)),
  );
  const done: string[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    await session.exec(m.sql);
    await session.rows('INSERT INTO schema_migrations (owner, version, name) VALUES ($1, $2, $3)', [owner, m.version, m.name]);
    done.push(`${owner}/${m.version}_${m.name}`);
  }
  return done;
}
