/**
 * The statements a transaction issued and has not waited for. A statement still in flight when the
 * transaction's function returns is part of the transaction: COMMIT goes behind it (one round trip),
 * and its failure is the transaction's (DatabasePort.transaction). Both storage adapters keep one.
 *
 * Once the function has returned, the transaction takes no more statements (`closed`): one issued
 * then would travel behind COMMIT, outside the transaction, on a connection that may already serve
 * another. A function must issue every statement before it returns, even those it does not wait for.
 */
export class InFlight {
  private readonly pending = new Set<Promise<unknown>>();
  closed = false;

  /** Told of each statement refused because the transaction was closed (the adapters log it: a defect of the caller). */
  constructor(private readonly onLate?: (error: Error) => void) {}

  /** The refusal of a statement issued once closed, reported to `onLate`. */
  refuse(text: string): Promise<never> {
    const error = lateStatement(text);
    this.onLate?.(error);
    return Promise.reject(error);
  }

  /** What `fn` resolves to; once it has settled, the transaction takes no more statements. */
  async until<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } finally {
      this.closed = true;
    }
  }

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

function lateStatement(text: string): Error {
  return new Error(
    `a statement was issued after its transaction's function had returned (it would run outside the transaction): ${text.replace(/\s+/g, ' ').trim().slice(0, 120)}`,
  );
}
