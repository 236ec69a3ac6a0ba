/**
 * Statements of one transaction issued together (one round trip for all, in issue order) and
 * awaited as one: every one settles first, then the first failure in issue order is thrown (after
 * a failed statement, those behind it only report the aborted transaction). Resolves to their results.
 */
export async function pipelined<T extends readonly unknown[]>(pending: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(pending);
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
