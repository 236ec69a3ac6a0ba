/**
 * One read shared by every caller waiting at the same moment, never older than the call: `read()`
 * joins the next query to start, never one already under way, so what it answers was read after
 * the call began (a write committed before the call is seen). The first query of a round starts
 * on setImmediate, so calls received in the same I/O turn join it; one query runs at a time, and
 * calls arriving meanwhile share the one that starts when it ends. Each caller may name what it
 * wants (`W`): the query gets every caller's wish of its round, and each caller the round's answer.
 */
export class CoalescedRead<T, W = void> {
  private next: { wanted: W[]; promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } | null = null;
  private running = false;

  constructor(private readonly query: (wanted: W[]) => Promise<T>) {}

  read(wanted: W): Promise<T> {
    if (!this.next) {
      this.next = { wanted: [], ...Promise.withResolvers<T>() };
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    }
    this.next.wanted.push(wanted);
    return this.next.promise;
  }

  private async drain(): Promise<void> {
    while (this.next) {
      const round = this.next;
      this.next = null;
      try {
        round.resolve(await this.query(round.wanted));
      } catch (error) {
        round.reject(error);
      }
    }
    this.running = false;
  }
}
