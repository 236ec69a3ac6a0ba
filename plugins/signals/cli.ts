#!/usr/bin/env bun
/**
 * `bun run signals import <file.json>`: validate a catalog file (the seed.json format) and upsert it
 * into the database of the signals-agent preset (DATABASE_URL or the PGlite data directory).
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { assemble } from '../../core/deployment.ts';
import { definePreset, ConfigError } from '../../core/config.ts';
import { ProtocolError } from '../../core/errors.ts';
import { Database } from '../../core/ports/database.ts';
import { storageFor } from '../../config/storage.ts';
import tasks from '../tasks/index.ts';
import signals from './index.ts';
import { importCatalog } from './catalog.ts';

const [command, file] = process.argv.slice(2);
if (command !== 'import' || !file) {
  console.error('usage: bun run signals import <catalog.json>');
  process.exit(2);
}
try {
  const deployment = await assemble(definePreset({ name: 'signals-cli', log: { level: 'warn' }, plugins: [storageFor, tasks({ worker: false }), signals({ seed: false })] }));
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
