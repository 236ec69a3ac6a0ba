#!/usr/bin/env bun
/**
 * `bun run sales import <products.json>`: validate a product catalog (the format of
 * plugins/inventory-db/seed.json) and upsert it into the sales agent's database (DATABASE_URL, or
 * the PGlite data directory). Products are matched by product_id; new ones go to the end of the
 * catalog order.
 */
import { readFileSync } from 'node:fs';
import { assemble } from '../core/deployment.ts';
import { definePreset, ConfigError } from '../core/config.ts';
import { ProtocolError } from '../core/errors.ts';
import { Database } from '../core/ports/database.ts';
import { storage } from '../config/storage.ts';
import inventoryDb from '../plugins/inventory-db/index.ts';
import { importCatalog } from '../plugins/inventory-db/catalog.ts';
import { exitOnHelp } from '../lib/cli.ts';

const usage = `usage: bun run sales import <products.json>

Validates a product catalog (the format of plugins/inventory-db/seed.json) and upserts it into the sales
agent's database (DATABASE_URL, else the PGlite directory DATA_DIR); products are matched by product_id.`;
exitOnHelp(usage);
const [command, file] = process.argv.slice(2);
if (command !== 'import' || !file) {
  console.error(usage);
  process.exit(2);
}
try {
  const deployment = await assemble(definePreset({ name: 'sales-cli', log: { level: 'warn' }, plugins: [storage, inventoryDb({ seed: false })] }));
  await deployment.start();
  try {
    const counts = await importCatalog(deployment.get(Database), JSON.parse(readFileSync(file, 'utf8')));
    console.log(`imported ${counts.products} products from ${file}`);
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
