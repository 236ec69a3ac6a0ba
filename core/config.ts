import * as v from 'valibot';
import type { PluginInstance } from './plugin.ts';
import { describeIssues } from './validation.ts';
import { ConfigError } from './config-error.ts';

export { ConfigError };

const namespace = v.pipe(v.string(), v.regex(/^[a-z][a-z0-9]{1,15}$/, 'must be 2-16 lowercase letters or digits, starting with a letter'));
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
    /** Processes serving the port (hosts/workers.ts); 0 = one per core. PGlite always serves from one. */
    workers: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(256)),
    /** After a burst of requests, collect garbage once none has arrived for this long (hosts/idle-collect.ts); 0 = never. */
    idleCollectMs: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(3_600_000)),
    /** After a burst, once none has arrived for this long, also drop compiled code (hosts/idle-collect.ts); 0 = never. */
    idleShrinkMs: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(3_600_000)),
  }),
  protocol: v.object({ namespace }),
  /** `format`: `pretty` (pino-pretty, for people) or `json` (one object a line); default pretty when stdout is a terminal. */
  log: v.object({ level: logLevel, format: v.optional(v.picklist(['pretty', 'json'], 'must be pretty or json')) }),
  /** Key material for encrypting stored secrets (see core/secret-box.ts); at least 32 characters. */
  secrets: v.object({ key: v.optional(v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'))) }),
});

export type AppConfig = v.InferOutput<typeof configSchema>;

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

export type Env = Record<string, string | undefined>;

/** A plugin entry may depend on the resolved config and the environment (e.g. choose the storage adapter). */
export type PluginEntry = PluginInstance<any> | ((context: { config: AppConfig; env: Env }) => PluginInstance<any> | readonly PluginInstance<any>[] | null);

/**
 * A preset entry that picks one adapter from a keyed map by an environment variable and fails
 * loudly on an unknown key, naming the variable and the choices.
 */
export function chooseAdapter(choice: {
  variable: string;
  fallback: (env: Env) => string;
  adapters: Readonly<Record<string, () => PluginInstance<any>>>;
}): PluginEntry {
  return ({ env }) => {
    const key = env[choice.variable] || choice.fallback(env);
    const make = Object.hasOwn(choice.adapters, key) ? choice.adapters[key] : undefined;
    if (!make) {
      throw new ConfigError(`${choice.variable}: unknown adapter ${JSON.stringify(key)} (one of ${Object.keys(choice.adapters).join(', ')})`);
    }
    return make();
  };
}

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
  { env: 'WORKERS', path: 'server.workers', type: 'int', description: 'Processes serving the port (default 0: one per core; PGlite: always 1)' },
  { env: 'PUBLIC_URL', path: 'server.publicUrl', type: 'string', description: 'Public base URL of this deployment' },
  { env: 'MAX_BODY_BYTES', path: 'server.maxBodyBytes', type: 'int', description: 'Request body cap (default 1048576)' },
  {
    env: 'IDLE_COLLECT_MS',
    path: 'server.idleCollectMs',
    type: 'int',
    description: 'Collect garbage once after a burst, when idle this long (default 2000; 0 never)',
  },
  {
    env: 'IDLE_SHRINK_MS',
    path: 'server.idleShrinkMs',
    type: 'int',
    description: 'Also drop compiled code after a burst, when idle this long (default 30000; 0 never)',
  },
  { env: 'PROTOCOL_NAMESPACE', path: 'protocol.namespace', type: 'string', description: 'Protocol namespace (default proto; adcp speaks AdCP)' },
  { env: 'LOG_LEVEL', path: 'log.level', type: 'string', description: 'pino level (default info)' },
  { env: 'LOG_FORMAT', path: 'log.format', type: 'string', description: 'pretty or json (default: pretty when stdout is a terminal, else json)' },
  { env: 'SECRETS_KEY', path: 'secrets.key', type: 'string', description: 'Encrypts stored signing keys and webhook credentials (>= 32 chars)' },
];

const DEFAULTS: Omit<AppConfig, 'name'> = {
  server: { port: 3000, host: '0.0.0.0', maxBodyBytes: 1024 * 1024, workers: 0, idleCollectMs: 2000, idleShrinkMs: 30_000 },
  protocol: { namespace: 'proto' },
  log: { level: 'info' },
  secrets: {},
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
export function loadConfig(preset: Preset, env: Env = process.env): AppConfig {
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
