/**
 * Inserts of callers waiting at the same moment made as one (a group commit): `write(items)`
 * resolves once a write holding its items has completed, so a caller answers only after its rows
 * are stored. Up to `concurrency` writes run at once, each started as soon as a slot is free (no
 * added wait when idle); callers arriving while every slot is busy join the next write, up to
 * `maxItems` items (a caller with more goes alone). A joint write that fails is retried once per
 * caller, alone, so one caller's items cannot fail another's.
 */
export class CoalescedWrite<T> {
  private readonly queue: Array<{ items: readonly T[]; resolve(): void; reject(error: unknown): void }> = [];
  private running = 0;

  constructor(
    private readonly insert: (items: readonly T[]) => Promise<void>,
    private readonly options: { concurrency: number; maxItems: number },
  ) {}

  write(items: readonly T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    this.queue.push({ items, resolve, reject });
    this.pump();
    return promise;
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const round = [this.queue.shift()!];
      let count = round[0]!.items.length;
      while (this.queue.length > 0 && count + this.queue[0]!.items.length <= this.options.maxItems) {
        count += this.queue[0]!.items.length;
        round.push(this.queue.shift()!);
      }
      this.running++;
      void this.run(round).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async run(round: typeof this.queue): Promise<void> {
    try {
      await this.insert(round.length === 1 ? round[0]!.items : round.flatMap((c) => c.items));
      for (const c of round) c.resolve();
    } catch (error) {
      if (round.length === 1) return round[0]!.reject(error);
      await Promise.all(round.map((c) => this.insert(c.items).then(c.resolve, c.reject)));
    }
  }
}
