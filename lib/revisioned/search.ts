/** A case-insensitive LIKE pattern matching `text` anywhere, with LIKE wildcards escaped. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`;
}
