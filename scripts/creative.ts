#!/usr/bin/env bun
/**
 * `bun run creative import <formats.json>`: validate a format catalog (an array of format
 * definitions, or `{formats: [...]}`, in the shape of the reference catalog) and upsert it as the
 * vendor's own formats into the database of the creative-agent preset (DATABASE_URL or the PGlite
 * data directory). A vendor definition replaces a reference format of the same id.
 */
import { readFileSync } from 'node:fs';
import { assemble } from '../core/deployment.ts';
import { definePreset, ConfigError } from '../core/config.ts';
import { ProtocolError } from '../core/errors.ts';
import { Database } from '../core/ports/database.ts';
import { Clock } from '../core/ports/clock.ts';
import { storage } from '../config/storage.ts';
import auth from '../plugins/auth/index.ts';
import idempotency from '../plugins/idempotency/index.ts';
import tasks from '../plugins/tasks/index.ts';
import creative from '../plugins/creative/index.ts';
import { parseCatalog, upsertFormats } from '../plugins/creative/formats.ts';
import { exitOnHelp } from '../lib/cli.ts';

const usage = `usage: bun run creative import <formats.json>

Validates a format catalog (an array of format definitions, or {formats: [...]}) and upserts it as the
vendor's own formats into the creative agent's database (DATABASE_URL, else the PGlite directory DATA_DIR).`;
exitOnHelp(usage);
const [command, file] = process.argv.slice(2);
if (command !== 'import' || !file) {
  console.error(usage);
  process.exit(2);
}
try {
  // Parse first: a bad file touches no database.
  const formats = parseCatalog(JSON.parse(readFileSync(file, 'utf8')));
  const deployment = await assemble(
    definePreset({
      name: 'creative-cli',
      log: { level: 'warn' },
      plugins: [storage, auth(), idempotency({ purgeIntervalSeconds: 0 }), tasks({ worker: false }), creative({ pruneIntervalMs: 0 })],
    }),
  );
  await deployment.start();
  try {
    const written = await upsertFormats(deployment.get(Database), formats, 'vendor', deployment.get(Clock).now());
    console.log(`imported ${formats.length} formats from ${file} (${written} new or changed)`);
  } finally {
    await deployment.stop();
  }
} catch (error) {
  if (error instanceof ProtocolError || error instanceof ConfigError || error instanceof SyntaxError) {
    console.error(`import failed: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
