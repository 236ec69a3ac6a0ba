import type { Token } from './token.ts';
import { token } from './token.ts';
import { loadConfig, ConfigError, type AppConfig, type Env, type Preset } from './config.ts';
import { depToken, isOptionalDep, resolveOptions, type Kernel, type PluginHooks, type PluginInstance } from './plugin.ts';
import { createLogger, type Logger } from './log.ts';
import { Scheduler, type Timers } from './scheduler.ts';
import { Clock, systemClock } from './ports/clock.ts';
import { Ids, defaultIds } from './ports/ids.ts';
import { Database } from './ports/database.ts';
import { EndpointRegistry, Endpoints } from './endpoint.ts';
import { Http, HttpRoutes } from './http.ts';
import { SecretBox } from './ports/secrets.ts';
import { createSecretBox } from './secret-box.ts';
import { assertStageProviders, type OperationNeeds } from './operation.ts';
import { Tasks } from './task.ts';

export const Config = token<AppConfig>('core.config');

/** Ports the kernel itself binds; tests may replace Clock and Ids through `overrides`. */
const KERNEL_TOKENS: readonly Token<unknown>[] = [Config, Clock, Ids, Endpoints, Http, SecretBox];

export interface AssembleOptions {
  env?: Env;
  logger?: Logger;
  /** Values bound before any plugin initialises; they win over a plugin's own binding (tests: a ManualClock). */
  overrides?: ReadonlyArray<[Token<any>, unknown]>;
  /** Timer source of the scheduler (tests: ManualTimers). */
  timers?: Timers;
  /** Log the start-up warnings about configuration (default true; the other workers of one server leave them to the primary). */
  startupWarnings?: boolean;
}

export interface Deployment {
  readonly config: AppConfig;
  readonly logger: Logger;
  readonly plugins: readonly string[];
  readonly scheduler: Scheduler;
  /** Resolve a bound port (hosts/serve.ts, tests, CLIs); throws naming the port when nothing binds it. */
  get<T>(token: Token<T>): T;
  tryGet<T>(token: Token<T>): T | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function resolveEntries(preset: Preset, config: AppConfig, env: Env): PluginInstance<any>[] {
  const out: PluginInstance<any>[] = [];
  for (const entry of preset.plugins) {
    const value = typeof entry === 'function' ? entry({ config, env }) : entry;
    if (value === null) continue;
    if (Array.isArray(value)) out.push(...value);
    else out.push(value as PluginInstance<any>);
  }
  return out;
}

/** Providers first: a plugin initialises after every plugin whose port it declares (required or optional). */
function order(plugins: PluginInstance<any>[], providerOf: Map<symbol, string>): PluginInstance<any>[] {
  const byName = new Map(plugins.map((p) => [p.definition.name, p]));
  const done = new Set<string>();
  const visiting: string[] = [];
  const out: PluginInstance<any>[] = [];
  const visit = (p: PluginInstance<any>) => {
    const name = p.definition.name;
    if (done.has(name)) return;
    if (visiting.includes(name)) throw new ConfigError(`Plugin dependency cycle: ${[...visiting.slice(visiting.indexOf(name)), name].join(' -> ')}`);
    visiting.push(name);
    for (const dep of Object.values(p.definition.deps ?? {})) {
      const provider = providerOf.get(depToken(dep).id);
      if (provider && provider !== name && provider !== 'kernel') visit(byName.get(provider)!);
    }
    visiting.pop();
    done.add(name);
    out.push(p);
  };
  plugins.forEach(visit);
  return out;
}

/**
 * Build a deployment from a preset: validate config and every plugin's options (with the
 * environment), check that each required port has exactly one provider (errors name the plugins
 * and the port), then initialise plugins in dependency order, each receiving exactly the
 * dependencies it declared. Bound ports live in this deployment's own map of port to value: plugins bind
 * values they built (`kernel.provide`), so there is nothing for a reflective container to construct.
 */
export async function assemble(preset: Preset, options: AssembleOptions = {}): Promise<Deployment> {
  const env = options.env ?? process.env;
  const config = loadConfig(preset, env);
  const logger = options.logger ?? createLogger(config.log.level, config.log.format);
  const plugins = resolveEntries(preset, config, env);
  const bound = new Map<symbol, unknown>();
  const scheduler = new Scheduler(logger.child({ component: 'scheduler' }), options.timers);

  const names = new Set<string>();
  for (const p of plugins) {
    if (names.has(p.definition.name)) throw new ConfigError(`Plugin "${p.definition.name}" appears twice in preset "${preset.name}"`);
    names.add(p.definition.name);
  }
  const pluginOptions = new Map(plugins.map((p) => [p.definition.name, resolveOptions(p, env)]));

  const providerOf = new Map<symbol, string>(KERNEL_TOKENS.map((t) => [t.id, 'kernel']));
  for (const p of plugins) {
    for (const t of p.definition.provides ?? []) {
      const other = providerOf.get(t.id);
      if (other && other !== 'kernel') {
        throw new ConfigError(`Port "${t.name}" is provided by both "${other}" and "${p.definition.name}"; keep one of them`);
      }
      providerOf.set(t.id, p.definition.name);
    }
  }
  const overridden = new Set((options.overrides ?? []).map(([t]) => t.id));
  for (const p of plugins) {
    for (const dep of Object.values(p.definition.deps ?? {})) {
      const t = depToken(dep);
      if (!isOptionalDep(dep) && !providerOf.has(t.id) && !overridden.has(t.id)) {
        throw new ConfigError(`Plugin "${p.definition.name}" requires port "${t.name}", which no plugin of preset "${preset.name}" provides`);
      }
    }
  }

  bound.set(Config.id, config);
  bound.set(Clock.id, systemClock);
  bound.set(Ids.id, defaultIds);
  bound.set(SecretBox.id, createSecretBox(config.secrets.key));
  bound.set(Endpoints.id, new EndpointRegistry());
  bound.set(Http.id, new HttpRoutes());
  for (const [t, value] of options.overrides ?? []) bound.set(t.id, value);

  const isBound = (t: Token<unknown>) => bound.has(t.id);
  const get = <T>(t: Token<T>): T => {
    if (!isBound(t)) throw new Error(`Port "${t.name}" is not provided in this deployment`);
    return bound.get(t.id) as T;
  };
  const tryGet = <T>(t: Token<T>): T | undefined => bound.get(t.id) as T | undefined;

  const ordered = order(plugins, providerOf);
  const hooks = new Map<string, PluginHooks>();
  for (const p of ordered) {
    const def = p.definition;
    const declared = def.deps ?? {};
    const values: Record<string, unknown> = {};
    for (const [key, dep] of Object.entries(declared)) values[key] = isOptionalDep(dep) ? tryGet(dep.token) : get(depToken(dep));
    // Reading a dependency that was not declared is an assembly error, not a silent undefined.
    const deps = new Proxy(Object.freeze(values), {
      get(target, key) {
        if (typeof key === 'string' && !(key in target) && key !== 'then' && key !== 'toJSON') {
          throw new ConfigError(`Plugin "${def.name}" uses "${key}" without declaring it in deps`);
        }
        return Reflect.get(target, key);
      },
    });
    const kernel: Kernel<unknown> = {
      name: def.name,
      options: pluginOptions.get(def.name),
      config,
      logger: logger.child({ plugin: def.name }),
      scheduler: { add: (spec) => scheduler.add({ ...spec, name: `${def.name}.${spec.name}` }) },
      provide: (t, value) => {
        if (!(def.provides ?? []).some((x) => x.id === t.id)) {
          throw new ConfigError(`Plugin "${def.name}" binds port "${t.name}" without declaring it in provides`);
        }
        if (!overridden.has(t.id)) bound.set(t.id, value);
      },
    };
    hooks.set(def.name, (await def.init(deps as never, kernel as Kernel<never>)) ?? {});
    for (const t of def.provides ?? []) {
      if (!isBound(t)) throw new ConfigError(`Plugin "${def.name}" declares port "${t.name}" but did not provide it`);
    }
  }

  // Every stage an operation declares has its provider: a rate limit with no limiter would silently not limit.
  const operations: OperationNeeds[] = [
    ...get(Endpoints)
      .list()
      .map((e) => ({ name: `${e.method} ${e.path}`, auth: e.auth, rateLimits: e.rateLimits })),
    ...(tryGet(Tasks)
      ?.list()
      .map((t) => ({ name: `task ${t.name}`, auth: t.auth ?? 'required', rateLimits: t.rateLimits, idempotent: t.mutating })) ?? []),
  ];
  assertStageProviders(operations, isBound);

  const started: string[] = [];
  let starting: Promise<void> | null = null;
  let stopping: Promise<void> | null = null;
  const startAll = async () => {
    for (const p of ordered) {
      if (p.definition.migrations?.length) await get(Database).migrate(p.definition.name, p.definition.migrations);
      await hooks.get(p.definition.name)!.start?.();
      started.push(p.definition.name);
    }
    scheduler.start();
    logger.info({ preset: preset.name, plugins: ordered.map((p) => p.definition.name), jobs: scheduler.list() }, 'deployment started');
    const keepsSecrets = ordered.filter((p) => Object.values(p.definition.deps ?? {}).some((d) => depToken(d).id === SecretBox.id));
    if (!config.secrets.key && keepsSecrets.length && options.startupWarnings !== false) {
      logger.warn(
        { plugins: keepsSecrets.map((p) => p.definition.name) },
        'SECRETS_KEY is not set: signing keys and webhook credentials are stored unencrypted; set it (>= 32 characters) in production',
      );
    }
  };

  return {
    config,
    logger,
    scheduler,
    plugins: ordered.map((p) => p.definition.name),
    get,
    tryGet,
    /** Idempotent: a second call waits for the first. */
    start() {
      starting ??= startAll();
      return starting;
    },
    /** Jobs first, then plugins in reverse start order; idempotent. */
    stop() {
      stopping ??= (async () => {
        await scheduler.stop();
        for (const name of [...started].reverse()) {
          try {
            await hooks.get(name)!.stop?.();
          } catch (error) {
            logger.error({ err: error, plugin: name }, 'plugin failed to stop cleanly');
          }
        }
        started.length = 0;
      })();
      return stopping;
    },
  };
}
