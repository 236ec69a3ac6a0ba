#!/usr/bin/env bun
/**
 * `bun run signals import <file.json>`: validate a catalog file (the seed.json format) and upsert it
 * into the database of the signals-agent preset (DATABASE_URL or the PGlite data directory).
 */
import { readFileSync } from 'node:fs';
import { assemble } from '../core/deployment.ts';
import { definePreset, ConfigError } from '../core/config.ts';
import { ProtocolError } from '../core/errors.ts';
import { Database } from '../core/ports/database.ts';
import { storage } from '../config/storage.ts';
import auth from '../plugins/auth/index.ts';
import idempotency from '../plugins/idempotency/index.ts';
import tasks from '../plugins/tasks/index.ts';
import signals from '../plugins/signals/index.ts';
import { importCatalog } from '../plugins/signals/catalog.ts';
import { exitOnHelp } from '../lib/cli.ts';

const usage = `usage: bun run signals import <catalog.json>

Validates a signals catalog file (the format of plugins/signals/seed.json) and upserts it into the signals
agent's database (DATABASE_URL, else the PGlite directory DATA_DIR).`;
exitOnHelp(usage);
const [command, file] = process.argv.slice(2);
if (command !== 'import' || !file) {
  console.error(usage);
  process.exit(2);
}
try {
  const deployment = await assemble(
    definePreset({
      name: 'signals-cli',
      log: { level: 'warn' },
      plugins: [storage, auth(), idempotency({ purgeIntervalSeconds: 0 }), tasks({ worker: false }), signals({ seed: false })],
    }),
  );
  await deployment.start();
  try {
    const counts = await importCatalog(deployment.get(Database), JSON.parse(readFileSync(file, 'utf8')));
    console.log(`imported ${counts.signals} signals and ${counts.destinations} destinations from ${file}`);
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
