/**
 * The statements a transaction issued and has not waited for. A statement still in flight when the
 * transaction's function returns is part of the transaction: COMMIT goes behind it (one round trip),
 * and its failure is the transaction's (DatabasePort.transaction). Both storage adapters keep one.
 */
export class InFlight {
  private readonly pending = new Set<Promise<unknown>>();

  /** `run`, tracked until it settles. */
  track<T>(run: Promise<T>): Promise<T> {
    this.pending.add(run);
    const settled = () => this.pending.delete(run);
    run.then(settled, settled);
    return run;
  }

  /** Once those in flight now have settled: the first failure among them, if any. */
  async failure(): Promise<{ error: unknown } | undefined> {
    for (const s of await Promise.allSettled([...this.pending])) if (s.status === 'rejected') return { error: s.reason };
    return undefined;
  }
}
