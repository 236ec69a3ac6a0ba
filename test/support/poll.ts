/** Poll `check` until it holds or one second has passed; true when it held (a change announced by another instance). */
export async function withinOneSecond(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + 1000;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await Bun.sleep(5);
  }
}
