/**
 * What every command-line entry point shares: `--help` answered before anything is opened, and a port
 * checked before a server's migrations run.
 */

/** `--help` or `-h` among `args`: print `usage` to standard output and exit 0 (no database is opened). */
export function exitOnHelp(usage: string, args: readonly string[] = process.argv.slice(2)): void {
  if (!args.includes('--help') && !args.includes('-h')) return;
  console.log(usage.trim());
  process.exit(0);
}

/**
 * Why `port` cannot be listened on at `hostname`, in one line, or null when it can. The port is bound and released
 * at once: a server that cannot serve stops before it migrates or starts anything.
 */
export function portProblem(port: number, hostname: string): string | null {
  if (port === 0) return null;
  try {
    Bun.listen({ hostname, port, socket: { data() {} } }).stop(true);
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') return `port ${port} is already in use on ${hostname}: stop the other server or set PORT to a free port`;
    if (code === 'EACCES') return `port ${port} on ${hostname} needs privileges this process does not have: set PORT above 1023`;
    if (code === 'EADDRNOTAVAIL') return `${hostname} is not an address of this machine: set HOST`;
    return `cannot listen on ${hostname}:${port}: ${(error as Error).message}`;
  }
}

/** node:util parseArgs, with an unknown or malformed option answered by its message and the usage (exit 2), not a stack. */
export function parseArgsOrExit<T>(usage: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    console.error(`error: ${(error as Error).message}\n\n${usage.trim()}`);
    process.exit(2);
  }
}
