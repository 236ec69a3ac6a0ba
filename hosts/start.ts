#!/usr/bin/env bun
/**
 * `bun run start [preset]`: assemble the preset (default config/registry.ts), serve it, and drain
 * on SIGTERM/SIGINT (stop accepting, finish in-flight requests, stop plugins, close pools).
 */
import 'reflect-metadata';
import { resolve } from 'node:path';
import { assemble } from '../core/deployment.ts';
import { ConfigError, type Preset } from '../core/config.ts';
import { serve } from './serve.ts';

const presetPath = resolve(process.argv[2] ?? 'config/registry.ts');

try {
  const preset: Preset = (await import(presetPath)).default;
  if (!preset?.plugins) throw new ConfigError(`${presetPath} has no default-exported preset`);
  const deployment = await assemble(preset);
  const server = await serve(deployment);
  deployment.logger.info({ url: server.url.href, preset: preset.name, storage: deployment.config.database.url ? 'postgres' : 'pglite' }, 'listening');
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
