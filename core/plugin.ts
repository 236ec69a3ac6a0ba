import * as valibot from 'valibot';
import type * as v from 'valibot';
import type { Token } from './token.ts';
import type { Logger } from './log.ts';
import type { AppConfig } from './config.ts';
import type { Migration } from './ports/database.ts';
import type { PluginScheduler } from './scheduler.ts';
import { describeIssues } from './validation.ts';
import { ConfigError } from './config-error.ts';

/** A dependency the plugin can do without: resolved to `undefined` when no plugin provides it. */
export interface OptionalDep<T> {
  readonly optional: true;
  readonly token: Token<T>;
}

export function optional<T>(token: Token<T>): OptionalDep<T> {
  return { optional: true, token };
}

export type DepSpec = Token<any> | OptionalDep<any>;
export type DepsSpec = Readonly<Record<string, DepSpec>>;

/** The values a plugin receives, typed from its declaration. */
export type ResolvedDeps<D extends DepsSpec> = {
  readonly [K in keyof D]: D[K] extends OptionalDep<infer T> ? T | undefined : D[K] extends Token<infer T> ? T : never;
};

export function isOptionalDep(d: DepSpec): d is OptionalDep<unknown> {
  return (d as OptionalDep<unknown>).optional === true;
}
export function depToken(d: DepSpec): Token<unknown> {
  return isOptionalDep(d) ? d.token : (d as Token<unknown>);
}

/** What the kernel hands a plugin besides its dependencies. */
export interface Kernel<O> {
  readonly name: string;
  readonly options: O;
  readonly config: AppConfig;
  readonly logger: Logger;
  /** Background jobs; names are prefixed `<plugin>.`; they start after every plugin started. */
  readonly scheduler: PluginScheduler;
  /** Bind a port this plugin declared in `provides`. */
  provide<T>(token: Token<T>, value: T): void;
}

/** Lifecycle of an initialised plugin; its state lives in the closure or object `init` returns. */
export interface PluginHooks {
  /** After every plugin's init and this plugin's migrations (providers start first). */
  start?(): Promise<void> | void;
  /** On shutdown, in reverse start order. */
  stop?(): Promise<void> | void;
}

/** An environment variable mapped onto an option path (`url`, `outbox.pollMs`). */
export type EnvBinding = string | { path: string; type: 'string' | 'int' | 'number' | 'bool' | 'csv' };

export interface PluginDefinition<O, D extends DepsSpec> {
  /** kebab-case, prefixed by the port for adapters (`storage-pglite`). */
  name: string;
  /** Everything the plugin uses from other plugins or the kernel; nothing else is reachable. */
  deps?: D;
  /** Ports this plugin binds in `init`; two plugins providing one port is an assembly error. */
  provides?: readonly Token<any>[];
  /** Valibot schema of the options; failures name `plugins.<name>.<path>` (and the variable). */
  options?: v.GenericSchema<unknown, O>;
  /** Environment variables that override options when set: `{ DATABASE_URL: 'url' }`. */
  env?: Readonly<Record<string, EnvBinding>>;
  /** SQL migrations owned by this plugin, applied before its `start`. */
  migrations?: readonly Migration[];
  init(deps: ResolvedDeps<D>, kernel: Kernel<O>): PluginHooks | void | Promise<PluginHooks | void>;
}

/** A plugin placed in a preset, with its raw options (validated, with the environment, at assembly). */
export interface PluginInstance<O = unknown> {
  readonly definition: PluginDefinition<O, DepsSpec>;
  readonly rawOptions: unknown;
}

export type PluginFactory<I> = (options?: I) => PluginInstance<any>;

/**
 * Declare a plugin. The factory checks its options at once when they cannot come from the
 * environment, so a preset with a bad option fails at load time with the option path named.
 */
export function definePlugin<I = undefined, O = I, const D extends DepsSpec = {}>(
  definition: PluginDefinition<O, D> & { options?: v.GenericSchema<I, O> },
): PluginFactory<I> {
  return (options?: I) => {
    const instance: PluginInstance<O> = { definition: definition as unknown as PluginDefinition<O, DepsSpec>, rawOptions: options ?? {} };
    if (!definition.env) resolveOptions(instance, {});
    return instance;
  };
}

function coerce(raw: string, type: Exclude<EnvBinding, string>['type'], variable: string, path: string): unknown {
  switch (type) {
    case 'int':
      if (!/^-?\d+$/.test(raw)) throw new ConfigError(`${path}: must be an integer (from ${variable}=${JSON.stringify(raw)})`);
      return Number(raw);
    case 'number':
      if (!Number.isFinite(Number(raw))) throw new ConfigError(`${path}: must be a number (from ${variable}=${JSON.stringify(raw)})`);
      return Number(raw);
    case 'bool':
      if (!/^(true|false|1|0)$/.test(raw)) throw new ConfigError(`${path}: must be true or false (from ${variable}=${JSON.stringify(raw)})`);
      return raw === 'true' || raw === '1';
    case 'csv':
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return raw;
  }
}

function setPath(target: Record<string, any>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) node = node[key] = { ...(node[key] ?? {}) };
  node[keys[keys.length - 1]!] = value;
}

/** Validate a plugin's options with the environment's overrides; errors name the option path and the variable. */
export function resolveOptions<O>(instance: PluginInstance<O>, env: Record<string, string | undefined>): O {
  const { definition } = instance;
  const prefix = `plugins.${definition.name}`;
  const merged: Record<string, any> = { ...(instance.rawOptions as Record<string, unknown>) };
  const sources = new Map<string, string>();
  for (const [variable, binding] of Object.entries(definition.env ?? {})) {
    const raw = env[variable];
    if (raw === undefined || raw === '') continue;
    const { path, type } = typeof binding === 'string' ? { path: binding, type: 'string' as const } : binding;
    setPath(merged, path, coerce(raw, type, variable, `${prefix}.${path}`));
    sources.set(`${prefix}.${path}`, `${variable}=${JSON.stringify(raw)}`);
  }
  if (!definition.options) return merged as O;
  const result = valibot.safeParse(definition.options, merged);
  if (result.success) return result.output;
  const { field, message } = describeIssues(result.issues, prefix);
  const covers = (path: string) => field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);
  const from = [...sources].find(([path]) => covers(path))?.[0];
  if (from) throw new ConfigError(`${message} (from ${sources.get(from)})`);
  const unset = Object.entries(definition.env ?? {}).find(([, b]) => covers(`${prefix}.${typeof b === 'string' ? b : b.path}`))?.[0];
  throw new ConfigError(unset ? `${message} (set ${unset})` : message);
}
