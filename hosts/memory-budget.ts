/**
 * The memory budget of a serving process, applied by the entry point (hosts/start.ts) before it
 * assembles anything.
 *
 * Bun's engine (JavaScriptCore) sizes its garbage-collected heap by the machine's RAM, so on a large
 * host a busy server lets tens of megabytes of garbage pile up between collections. It reads its
 * options only when it starts, so the process replaces itself once (`execve`: same pid, arguments
 * and environment) with `BUN_JSC_forceRAMSize` set to `MEMORY_BUDGET_MB` (default 512). A heuristic,
 * not a cap: live data beyond the budget is kept, collections only come sooner. `0` keeps the
 * engine's own sizing; an explicit `BUN_JSC_forceRAMSize` wins.
 */

export const DEFAULT_MEMORY_BUDGET_MB = 512;

/** The engine option for `env`, or null when nothing is to change. Exits with a message on a bad value. */
export function budgetOption(env: Record<string, string | undefined>): string | null {
  if (env.BUN_JSC_forceRAMSize !== undefined) return null;
  const raw = env.MEMORY_BUDGET_MB?.trim() || String(DEFAULT_MEMORY_BUDGET_MB);
  if (!/^\d{1,7}$/.test(raw)) {
    console.error(`Configuration error: MEMORY_BUDGET_MB: must be a whole number of megabytes (0 keeps the engine's own sizing), got "${raw.slice(0, 40)}"`);
    process.exit(2);
  }
  const mb = Number(raw);
  return mb === 0 ? null : String(mb * 1024 * 1024);
}

/**
 * Replace this process (same pid, arguments and environment) with one started under the budget, or
 * return when nothing is to change (already applied, `0`, or no `execve` on this platform).
 */
export function applyMemoryBudget(): void {
  const option = budgetOption(process.env);
  if (option === null || typeof process.execve !== 'function' || process.platform === 'win32') return;
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, BUN_JSC_forceRAMSize: option });
}
