#!/usr/bin/env bun
/**
 * `bun run start [preset]`: assemble the preset (default config/registry.ts), serve it, and drain
 * on SIGTERM/SIGINT (stop accepting, finish in-flight requests, stop plugins, close pools).
 * With `WORKERS` > 1 (default: one per core) this process also starts and supervises the other
 * workers serving the same port (hosts/workers.ts); a worker runs this same file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { assemble } from '../core/deployment.ts';
import { ConfigError, type Preset } from '../core/config.ts';
import { serve } from './serve.ts';
import { followPrimary, isWorker, startWorkers, workerCount, type Workers } from './workers.ts';
import { applyMemoryBudget } from './memory-budget.ts';
import { exitOnHelp, portProblem } from '../lib/cli.ts';

// First: it may replace this process (same pid) to apply MEMORY_BUDGET_MB before anything is assembled.
applyMemoryBudget();

const CONFIG_DIR = resolve(import.meta.dir, '../config');

/** The preset files shipped in config/ (those default-exporting definePreset). */
function presetFiles(): string[] {
  return readdirSync(CONFIG_DIR)
    .filter((f) => f.endsWith('.ts') && /export default definePreset\(/.test(readFileSync(join(CONFIG_DIR, f), 'utf8')))
    .map((f) => relative(process.cwd(), join(CONFIG_DIR, f)))
    .sort();
}

exitOnHelp(`usage: bun run start [preset]   (default config/registry.ts)

Assembles the preset, runs its migrations and serves it; SIGTERM/SIGINT drain and stop.
Presets: ${presetFiles().join(', ')}

Common settings (environment): PORT (3000), HOST (0.0.0.0), PUBLIC_URL, DATABASE_URL (else PGlite in DATA_DIR,
default ./data), PROTOCOL_NAMESPACE (proto; set adcp for AdCP clients), SECRETS_KEY, WORKERS, LOG_LEVEL,
LOG_FORMAT (pretty on a terminal, json otherwise). README.md "Configuration" lists them all.`);

const presetPath = resolve(process.argv[2] ?? 'config/registry.ts');

try {
  if (!existsSync(presetPath)) throw new ConfigError(`no preset at ${process.argv[2]}; the presets are: ${presetFiles().join(', ')}`);
  const preset: Preset = (await import(presetPath)).default;
  if (!preset?.plugins) throw new ConfigError(`${presetPath} has no default-exported preset; the presets are: ${presetFiles().join(', ')}`);
  const worker = isWorker();
  const deployment = await assemble(preset, { startupWarnings: !worker });
  // Before migrations: a port someone else holds is one line, not a stack trace after the schema changed.
  // (Workers share the primary's port.)
  const problem = worker ? null : portProblem(deployment.config.server.port, deployment.config.server.host);
  if (problem) {
    console.error(`error: ${problem}`);
    process.exit(1);
  }
  const { count, reason } = worker ? { count: 1 } : workerCount(deployment);
  if (reason && deployment.config.server.workers > 1) deployment.logger.warn({ workers: deployment.config.server.workers }, reason);
  // The primary starts first, so migrations have run before any worker starts.
  const server = await serve(deployment, { reusePort: worker || count > 1 });
  let workers: Workers | null = null;
  if (!worker) {
    deployment.logger.info({ url: server.url.href, preset: preset.name, plugins: deployment.plugins.length, workers: count }, 'listening');
    if (count > 1) workers = startWorkers(count, server.port, deployment.logger);
  }
  let signals = 0;
  const shutdown = async (signal: string) => {
    if (++signals > 1) process.exit(1);
    deployment.logger.info({ signal }, 'draining');
    await Promise.all([workers?.stop(), server.close()]);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (worker) followPrimary(() => void shutdown('primary exited'));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
