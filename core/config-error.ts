/** Raised for any invalid preset option or environment variable; the message names the path. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
