/** Join a mount prefix and a path without doubling slashes (`/signals` + `/mcp`). */
export function joinPath(prefix: string, path: string): string {
  const p = prefix.replace(/\/+$/, '');
  return `${p}${path.startsWith('/') ? path : `/${path}`}` || '/';
}
