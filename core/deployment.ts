import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import type { Token } from './token.ts';
import { loadConfig, ConfigError, type AppConfig, type Preset } from './config.ts';
import type { PluginContext, PluginInstance } from './plugin.ts';
import { createLogger, type Logger } from './log.ts';
import { Clock, systemClock } from './ports/clock.ts';
import { Ids, defaultIds } from './ports/ids.ts';
import { Database } from './ports/database.ts';
import { EndpointRegistry, Endpoints } from './endpoint.ts';
import { Http, HttpRoutes } from './http.ts';
import { token } from './token.ts';
import { SecretBox } from './ports/secrets.ts';
import { createSecretBox } from './secret-box.ts';

export const Config = token<AppConfig>('core.config');
export const RootLogger = token<Logger>('core.logger');

/** Ports the kernel itself provides; presets may override Clock and Ids through `overrides`. */
const KERNEL_TOKENS: readonly Token<unknown>[] = [Config, RootLogger, Clock, Ids, Endpoints, Http, SecretBox];

export interface AssembleOptions {
  env?: Record<string, string | undefined>;
  logger?: Logger;
  /** Values bound before any plugin registers (tests: a ManualClock, fixed ids). */
  overrides?: ReadonlyArray<[Token<any>, unknown]>;
}

export interface Deployment {
  readonly config: AppConfig;
  readonly container: DependencyContainer;
  readonly logger: Logger;
  readonly plugins: readonly string[];
  get<T>(token: Token<T>): T;
  tryGet<T>(token: Token<T>): T | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function resolveEntries(preset: Preset, config: AppConfig): PluginInstance<any>[] {
  const out: PluginInstance<any>[] = [];
  for (const entry of preset.plugins) {
    const value = typeof entry === 'function' ? entry(config) : entry;
    if (value === null) continue;
    if (Array.isArray(value)) out.push(...value);
    else out.push(value as PluginInstance<any>);
  }
  return out;
}

/** Order plugins so every provider starts before the plugins that require it. */
function order(plugins: PluginInstance<any>[], providerOf: Map<symbol, string>): PluginInstance<any>[] {
  const byName = new Map(plugins.map((p) => [p.definition.name, p]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: PluginInstance<any>[] = [];
  const visit = (p: PluginInstance<any>) => {
    const name = p.definition.name;
    if (done.has(name)) return;
    if (visiting.has(name)) throw new ConfigError(`Plugin dependency cycle through "${name}"`);
    visiting.add(name);
    for (const t of [...(p.definition.requires ?? []), ...(p.definition.optional ?? [])]) {
      const provider = providerOf.get(t.id);
      if (provider && provider !== name && provider !== 'kernel') visit(byName.get(provider)!);
    }
    visiting.delete(name);
    done.add(name);
    out.push(p);
  };
  plugins.forEach(visit);
  return out;
}

/**
 * Build a deployment from a preset: validate config, check that every required port has exactly
 * one provider (errors name the plugins involved), register plugins into a tsyringe child container.
 */
export async function assemble(preset: Preset, options: AssembleOptions = {}): Promise<Deployment> {
  const config = loadConfig(preset, options.env ?? process.env);
  const logger = options.logger ?? createLogger(config.log.level);
  const plugins = resolveEntries(preset, config);
  const container = rootContainer.createChildContainer();

  const names = new Set<string>();
  for (const p of plugins) {
    if (names.has(p.definition.name)) throw new ConfigError(`Plugin "${p.definition.name}" appears twice in preset "${preset.name}"`);
    names.add(p.definition.name);
  }

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
  for (const p of plugins) {
    for (const t of p.definition.requires ?? []) {
      if (!providerOf.has(t.id)) {
        throw new ConfigError(`Plugin "${p.definition.name}" requires port "${t.name}", which no plugin of preset "${preset.name}" provides`);
      }
    }
  }

  container.register(Config.id, { useValue: config });
  container.register(RootLogger.id, { useValue: logger });
  container.register(Clock.id, { useValue: systemClock });
  container.register(Ids.id, { useValue: defaultIds });
  container.register(SecretBox.id, { useValue: createSecretBox(config.secrets.key, logger) });
  container.register(Endpoints.id, { useValue: new EndpointRegistry() });
  container.register(Http.id, { useValue: new HttpRoutes() });
  for (const [t, value] of options.overrides ?? []) container.register(t.id, { useValue: value });

  const get = <T>(t: Token<T>): T => {
    if (!container.isRegistered(t.id, true)) throw new Error(`Port "${t.name}" is not provided in this deployment`);
    return container.resolve<T>(t.id);
  };
  const tryGet = <T>(t: Token<T>): T | undefined => (container.isRegistered(t.id, true) ? container.resolve<T>(t.id) : undefined);

  const ordered = order(plugins, providerOf);
  const contexts = new Map<string, PluginContext<any>>();
  for (const p of ordered) {
    const def = p.definition;
    const ctx: PluginContext<any> = {
      name: def.name,
      options: p.options,
      config,
      logger: logger.child({ plugin: def.name }),
      container,
      provide: (t, value) => {
        if (!(def.provides ?? []).some((x) => x.id === t.id)) {
          throw new ConfigError(`Plugin "${def.name}" binds port "${t.name}" without declaring it in provides`);
        }
        // A test override of the same port wins over the plugin's binding.
        if (!options.overrides?.some(([o]) => o.id === t.id)) container.register(t.id, { useValue: value });
      },
      get,
      tryGet,
    };
    contexts.set(def.name, ctx);
    await def.register?.(ctx);
  }
  for (const p of ordered) {
    for (const t of p.definition.provides ?? []) {
      if (!container.isRegistered(t.id, false)) {
        throw new ConfigError(`Plugin "${p.definition.name}" declares port "${t.name}" but did not provide it`);
      }
    }
  }

  const started: PluginInstance<any>[] = [];
  let starting: Promise<void> | null = null;
  let stopping: Promise<void> | null = null;
  const startAll = async () => {
    for (const p of ordered) {
      const ctx = contexts.get(p.definition.name)!;
      if (p.definition.migrations?.length) {
        await get(Database).migrate(p.definition.name, p.definition.migrations);
      }
      await p.definition.start?.(ctx);
      started.push(p);
    }
    logger.info({ preset: preset.name, plugins: ordered.map((p) => p.definition.name) }, 'deployment started');
  };

  return {
    config,
    container,
    logger,
    plugins: ordered.map((p) => p.definition.name),
    get,
    tryGet,
    /** Idempotent: a second call waits for the first. */
    start() {
      starting ??= startAll();
      return starting;
    },
    stop() {
      stopping ??= (async () => {
        for (const p of [...started].reverse()) {
          try {
            await p.definition.stop?.(contexts.get(p.definition.name)!);
          } catch (error) {
            logger.error({ err: error, plugin: p.definition.name }, 'plugin failed to stop cleanly');
          }
        }
        started.length = 0;
      })();
      return stopping;
    },
  };
}
