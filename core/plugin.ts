import type * as v from 'valibot';
import type { DependencyContainer } from 'tsyringe';
import type { Token } from './token.ts';
import type { Logger } from './log.ts';
import type { AppConfig } from './config.ts';
import type { Migration } from './ports/database.ts';
import { describeIssues } from './validation.ts';
import { ConfigError } from './config.ts';
import * as valibot from 'valibot';

/** What a plugin sees while registering and starting. */
export interface PluginContext<O> {
  readonly name: string;
  readonly options: O;
  readonly config: AppConfig;
  readonly logger: Logger;
  /** The deployment's tsyringe child container. */
  readonly container: DependencyContainer;
  /** Bind a port this plugin declared in `provides`. */
  provide<T>(token: Token<T>, value: T): void;
  /** Resolve a port; throws naming the token when nothing provides it. */
  get<T>(token: Token<T>): T;
  /** Resolve a port that may be absent (an optional collaborator). */
  tryGet<T>(token: Token<T>): T | undefined;
}

export interface PluginDefinition<O> {
  /** kebab-case, prefixed by the port for adapters (`storage-pglite`). */
  name: string;
  /** Ports this plugin binds; two plugins providing one port is an assembly error. */
  provides?: readonly Token<unknown>[];
  /** Ports that must be provided by another plugin of the deployment. */
  requires?: readonly Token<unknown>[];
  /** Ports used when present; they only order start-up. */
  optional?: readonly Token<unknown>[];
  /** Valibot schema of the options; failures name `plugins.<name>.<path>`. */
  options?: v.GenericSchema<unknown, O>;
  /** SQL migrations owned by this plugin, applied before `start`. */
  migrations?: readonly Migration[];
  register?(ctx: PluginContext<O>): void | Promise<void>;
  start?(ctx: PluginContext<O>): void | Promise<void>;
  stop?(ctx: PluginContext<O>): void | Promise<void>;
}

/** A plugin with validated options, ready to be placed in a preset. */
export interface PluginInstance<O = unknown> {
  readonly definition: PluginDefinition<O>;
  readonly options: O;
}

export type PluginFactory<I, O> = (options?: I) => PluginInstance<O>;

/**
 * Declare a plugin. The returned factory validates its options up front, so a preset with a
 * bad option fails at load time with the option path named.
 */
export function definePlugin<I = undefined, O = I>(definition: PluginDefinition<O> & { options?: v.GenericSchema<I, O> }): PluginFactory<I, O> {
  return (options?: I) => {
    let parsed = options as unknown as O;
    if (definition.options) {
      const result = valibot.safeParse(definition.options, options ?? {});
      if (!result.success) {
        const { message } = describeIssues(result.issues, `plugins.${definition.name}`);
        throw new ConfigError(message);
      }
      parsed = result.output;
    }
    return { definition, options: parsed };
  };
}
