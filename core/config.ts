import * as v from 'valibot';
import type { PluginInstance } from './plugin.ts';
import { describeIssues } from './validation.ts';

/** Raised for any invalid preset option or environment variable; the message names the path. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const namespace = v.pipe(
  v.string(),
  v.regex(/^[a-z][a-z0-9]{1,15}$/, 'must be 2-16 lowercase letters or digits, starting with a letter'),
);
const logLevel = v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

const configSchema = v.object({
  name: v.pipe(v.string(), v.minLength(1)),
  server: v.object({
    port: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535)),
    host: v.pipe(v.string(), v.minLength(1)),
    /** Largest accepted request body; bigger bodies get 413 before parsing. */
    maxBodyBytes: v.pipe(v.number(), v.integer(), v.minValue(1024)),
    /** Public base URL (used in generated documents such as OpenAPI servers and JWKS links). */
    publicUrl: v.optional(v.pipe(v.string(), v.url())),
  }),
  protocol: v.object({ namespace }),
  log: v.object({ level: logLevel }),
  database: v.object({
    url: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'))),
    dataDir: v.pipe(v.string(), v.minLength(1)),
    /** Schema holding every table (created when missing); lets several deployments share one database. */
    schema: v.optional(v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a plain lowercase identifier'))),
    /** Adapter key: `auto` picks postgres when a URL is set, else pglite. */
    adapter: v.picklist(['auto', 'postgres', 'pglite']),
  }),
  /** Key material for encrypting stored secrets (see core/secret-box.ts); at least 32 characters. */
  secrets: v.object({ key: v.optional(v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'))) }),
  search: v.object({
    adapter: v.picklist(['postgres', 'meilisearch']),
    meilisearchUrl: v.optional(v.pipe(v.string(), v.url())),
    meilisearchKey: v.optional(v.string()),
  }),
});

export type AppConfig = v.InferOutput<typeof configSchema>;

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

/** A plugin entry may depend on the resolved config (e.g. choose the storage adapter). */
export type PluginEntry = PluginInstance<any> | ((config: AppConfig) => PluginInstance<any> | readonly PluginInstance<any>[] | null);

export interface Preset extends DeepPartial<Omit<AppConfig, 'name'>> {
  name: string;
  plugins: readonly PluginEntry[];
}

export function definePreset(preset: Preset): Preset {
  return preset;
}

/** Environment variables and the config path each overrides. */
export const ENV_OVERRIDES: ReadonlyArray<{ env: string; path: string; type: 'string' | 'int'; description: string }> = [
  { env: 'PORT', path: 'server.port', type: 'int', description: 'HTTP port (default 3000)' },
  { env: 'HOST', path: 'server.host', type: 'string', description: 'Listen address (default 0.0.0.0)' },
  { env: 'PUBLIC_URL', path: 'server.publicUrl', type: 'string', description: 'Public base URL of this deployment' },
  { env: 'MAX_BODY_BYTES', path: 'server.maxBodyBytes', type: 'int', description: 'Request body cap (default 1048576)' },
  { env: 'PROTOCOL_NAMESPACE', path: 'protocol.namespace', type: 'string', description: 'Protocol namespace (default proto; adcp speaks AdCP)' },
  { env: 'LOG_LEVEL', path: 'log.level', type: 'string', description: 'pino level (default info)' },
  { env: 'DATABASE_URL', path: 'database.url', type: 'string', description: 'Postgres URL; unset = embedded PGlite' },
  { env: 'DATA_DIR', path: 'database.dataDir', type: 'string', description: 'PGlite data directory (default ./data)' },
  { env: 'DATABASE_SCHEMA', path: 'database.schema', type: 'string', description: 'Schema for all tables (default public)' },
  { env: 'STORAGE', path: 'database.adapter', type: 'string', description: 'auto | postgres | pglite' },
  { env: 'SECRETS_KEY', path: 'secrets.key', type: 'string', description: 'Encrypts stored signing keys and webhook credentials (>= 32 chars)' },
  { env: 'SEARCH', path: 'search.adapter', type: 'string', description: 'postgres | meilisearch (default postgres)' },
  { env: 'MEILISEARCH_URL', path: 'search.meilisearchUrl', type: 'string', description: 'Meilisearch URL' },
  { env: 'MEILISEARCH_KEY', path: 'search.meilisearchKey', type: 'string', description: 'Meilisearch API key' },
];

const DEFAULTS: Omit<AppConfig, 'name'> = {
  server: { port: 3000, host: '0.0.0.0', maxBodyBytes: 1024 * 1024 },
  protocol: { namespace: 'proto' },
  log: { level: 'info' },
  database: { dataDir: './data', adapter: 'auto' },
  secrets: {},
  search: { adapter: 'postgres' },
};

function setPath(target: Record<string, any>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) node = node[key] ??= {};
  node[keys[keys.length - 1]!] = value;
}

function merge(base: any, over: any): any {
  if (over === undefined) return base;
  if (base && typeof base === 'object' && !Array.isArray(base) && over && typeof over === 'object' && !Array.isArray(over)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, val] of Object.entries(over)) out[k] = merge(base[k], val);
    return out;
  }
  return over;
}

/** Preset + environment overrides, validated. Throws ConfigError naming the option (and variable). */
export function loadConfig(preset: Preset, env: Record<string, string | undefined> = process.env): AppConfig {
  const { plugins: _plugins, ...presetConfig } = preset;
  const merged = merge(structuredClone(DEFAULTS), presetConfig);
  for (const { env: name, path, type } of ENV_OVERRIDES) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    let value: unknown = raw;
    if (type === 'int') {
      if (!/^\d+$/.test(raw)) throw new ConfigError(`${path}: must be an integer (from ${name}=${JSON.stringify(raw)})`);
      value = Number(raw);
    }
    setPath(merged, path, value);
  }
  const result = v.safeParse(configSchema, merged);
  if (!result.success) {
    const { field, message } = describeIssues(result.issues);
    const source = ENV_OVERRIDES.find((o) => o.path === field);
    const fromEnv = source && env[source.env] ? ` (from ${source.env})` : '';
    throw new ConfigError(`${message}${fromEnv}`);
  }
  return result.output;
}
