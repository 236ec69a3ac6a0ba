import { token } from '../token.ts';

/** What a seller needs to know of a creative format. */
export interface FormatSummary {
  id: string;
  name: string;
  /** `display`, `video`, `audio`, `native`, `dooh`... */
  type?: string;
}

/**
 * The creative agent of this deployment, for features that validate format ids locally instead
 * of calling `list_creative_formats` over the network. `agentUrl` is the URL its format ids carry;
 * `find` returns the formats among `ids` that the agent defines.
 */
export interface CreativeFormatsPort {
  readonly agentUrl: string;
  /** Other agents whose formats this catalog holds verbatim (the reference creative agent): answered locally too. */
  readonly mirrors?: readonly string[];
  find(ids: readonly string[]): Promise<Map<string, FormatSummary>>;
}

export const CreativeFormats = token<CreativeFormatsPort>('creative.formats');
