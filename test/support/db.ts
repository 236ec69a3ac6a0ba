import { describe, beforeAll, afterAll, test } from 'bun:test';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { PluginInstance } from '../../core/plugin.ts';
import storagePglite, { createPgliteDatabase } from '../../plugins/storage-pglite/index.ts';
import storagePostgres, { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';

export type AdapterName = 'pglite' | 'postgres';

let shared: Promise<PGlite> | null = null;
/** One in-memory PGlite per test process (creating one costs seconds and hundreds of MB). */
export function sharedPglite(): Promise<PGlite> {
  return (shared ??= PGlite.create('memory://'));
}

export const DATABASE_URL = process.env.DATABASE_URL;

/** Adapters that can run here; Postgres only when DATABASE_URL is set (.ci/run sets it). */
export function adapterNames(): AdapterName[] {
  return DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

let counter = 0;
export function uniqueSchema(prefix: string): string {
  return `t_${prefix.replace(/[^a-z0-9]/g, '_')}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
}

/** A storage plugin for a preset under test, isolated in its own schema. */
export async function storagePlugin(adapter: AdapterName, schema: string): Promise<PluginInstance<any>> {
  if (adapter === 'postgres') return storagePostgres({ url: DATABASE_URL!, schema, max: 20 });
  return storagePglite({ dataDir: 'memory://', schema, instance: await sharedPglite() });
}

/** A bare DatabasePort for contract tests. */
export async function openDatabase(adapter: AdapterName, schema: string, max = 20): Promise<DatabasePort> {
  if (adapter === 'postgres') return createPostgresDatabase({ url: DATABASE_URL!, schema, max });
  return createPgliteDatabase({ dataDir: 'memory://', schema, instance: await sharedPglite() });
}

/** Drop a test schema (Postgres keeps them across runs otherwise). */
export async function dropSchema(adapter: AdapterName, schema: string): Promise<void> {
  // The suite's schema and those its servers derived from it (`${schema}_a`, `${schema}_r`, ...).
  const find = `SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name = '${schema}' OR starts_with(schema_name, '${schema}_')`;
  const drop = (names: string[]) => names.map((n) => `DROP SCHEMA IF EXISTS "${n}" CASCADE;`).join('\n');
  if (adapter === 'postgres') {
    const sql = postgres(DATABASE_URL!, { max: 1, onnotice: () => {} });
    const rows = await sql.unsafe<{ name: string }[]>(find);
    if (rows.length) await sql.unsafe(drop(rows.map((r) => r.name)));
    await sql.end();
  } else {
    const db = await sharedPglite();
    const { rows } = await db.query<{ name: string }>(find);
    if (rows.length) await db.exec(drop(rows.map((r) => r.name)));
  }
}

/** A suite that needs a Postgres server: without DATABASE_URL, a visible skip with its reason instead. */
export function describePostgres(title: string, body: () => void): void {
  if (DATABASE_URL) describe(title, body);
  else skipPostgresUnlessConfigured(title);
}

/** Without DATABASE_URL, a visible skip with its reason stands in for the Postgres run of `title`. */
export function skipPostgresUnlessConfigured(title: string): void {
  if (DATABASE_URL) return;
  describe(`${title} [postgres]`, () => {
    test.skip('skipped: DATABASE_URL is not set (.ci/run sets it)', () => {});
  });
}

/**
 * Run a suite once per adapter that can run here. `setup` receives the adapter name and a fresh
 * schema; whatever it returns is handed to the tests through the getter.
 */
export function forEachDatabase<T>(
  title: string,
  setup: (adapter: AdapterName, schema: string) => Promise<T>,
  teardown: (value: T) => Promise<void>,
  body: (get: () => T, adapter: AdapterName) => void,
): void {
  skipPostgresUnlessConfigured(title);
  for (const adapter of adapterNames()) {
    describe(`${title} [${adapter}]`, () => {
      const schema = uniqueSchema(title.toLowerCase().slice(0, 20));
      let value: T;
      beforeAll(async () => {
        value = await setup(adapter, schema);
      });
      afterAll(async () => {
        if (value !== undefined) await teardown(value);
        await dropSchema(adapter, schema);
      });
      body(() => value, adapter);
    });
  }
}
