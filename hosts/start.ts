#!/usr/bin/env bun
/**
 * `bun run start [preset]`: assemble the preset (default config/registry.ts), serve it, and drain
 * on SIGTERM/SIGINT (stop accepting, finish in-flight requests, stop plugins, close pools).
 */
import 'reflect-metadata';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { assemble } from '../core/deployment.ts';
import { ConfigError, type Preset } from '../core/config.ts';
import { serve } from './serve.ts';

const CONFIG_DIR = resolve(import.meta.dir, '../config');

/** The preset files shipped in config/ (those default-exporting definePreset). */
function presetFiles(): string[] {
  return readdirSync(CONFIG_DIR)
    .filter((f) => f.endsWith('.ts') && /export default definePreset\(/.test(readFileSync(join(CONFIG_DIR, f), 'utf8')))
    .map((f) => relative(process.cwd(), join(CONFIG_DIR, f)))
    .sort();
}

const presetPath = resolve(process.argv[2] ?? 'config/registry.ts');

try {
  if (!existsSync(presetPath)) throw new ConfigError(`no preset at ${process.argv[2]}; the presets are: ${presetFiles().join(', ')}`);
  const preset: Preset = (await import(presetPath)).default;
  if (!preset?.plugins) throw new ConfigError(`${presetPath} has no default-exported preset; the presets are: ${presetFiles().join(', ')}`);
  const deployment = await assemble(preset);
  const server = await serve(deployment);
  deployment.logger.info({ url: server.url.href, preset: preset.name, plugins: deployment.plugins.length }, 'listening');
  let signals = 0;
  const shutdown = async (signal: string) => {
    if (++signals > 1) process.exit(1);
    deployment.logger.info({ signal }, 'draining');
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
