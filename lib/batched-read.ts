import { sql, type SqlFragment } from '../core/sql.ts';

/** A round callers join until it starts. */
interface Round<W, R> {
  wishes: W[];
  answers: { promise: Promise<R[]>; resolve(answers: R[]): void; reject(error: unknown): void };
  started: boolean;
}

/**
 * Reads of many callers answered together, each caller its own answer: `query(shape, wishes)`
 * answers all the wishes of a round in one statement, in order. A caller joins the next round of
 * its shape to start, never one already under way, so what it gets was read after its call began.
 * A round starts on setImmediate (calls received in the same I/O turn join it) when fewer than
 * `concurrency` rounds of its shape run, else as soon as one ends: two at once by default, so a
 * round is gathered while the statement of the previous one runs, and both take their share of
 * the pool. Callers of different `shape`s (the statement their filters need) go in separate
 * rounds, so each statement keeps exact predicates and its indexes; a caller names its shape from
 * a fixed set. A failed statement fails its round's callers only.
 */
export class BatchedRead<W, R> {
  private readonly shapes = new Map<string, { running: number; next: Round<W, R> | null }>();

  constructor(
    private readonly query: (shape: string, wishes: W[]) => Promise<R[]>,
    private readonly concurrency = 2,
  ) {}

  async read(shape: string, wish: W): Promise<R> {
    let s = this.shapes.get(shape);
    if (!s) this.shapes.set(shape, (s = { running: 0, next: null }));
    if (!s.next) {
      s.next = { wishes: [], answers: Promise.withResolvers(), started: false };
      if (s.running < this.concurrency) this.start(shape, s, true);
    }
    const round = s.next;
    // Each call its own index: the same wish sent twice is answered twice.
    const index = round.wishes.push(wish) - 1;
    return (await round.answers.promise)[index]!;
  }

  private start(shape: string, s: { running: number; next: Round<W, R> | null }, nextTurn: boolean): void {
    s.running++;
    s.next!.started = true;
    const run = async () => {
      const round = s.next!;
      s.next = null;
      try {
        round.answers.resolve(await this.query(shape, round.wishes));
      } catch (error) {
        round.answers.reject(error);
      }
      s.running--;
      // A round gathered while this one ran, waiting for it to end.
      const waiting = s.next as Round<W, R> | null;
      if (waiting && !waiting.started) this.start(shape, s, false);
    };
    if (nextTurn) setImmediate(run);
    else void run();
  }
}

/**
 * The wishes of a round as the rows `r` of a batched statement: `r.i`, the wish's index (0-based),
 * and the `columns` declared (`name type, ...`, read from the wish's members of those names; null
 * when absent). The planner counts 100 rows for them whatever the round's size, so a prepared
 * statement keeps its generic plan instead of being planned again for every size (it would cost
 * more than the statement). A statement reading a wish in a LATERAL subquery selects `r.i` there,
 * so identical wishes of a round are each read, never merged (Memoize).
 */
export function wishRows(wishes: readonly object[], columns: string): SqlFragment {
  return sql`jsonb_to_recordset(${wishes.map((w, i) => ({ ...w, i }))}::jsonb) AS r(i int, ${sql.raw(columns)})`;
}

/** Rows of a batched statement, each tagged with its wish's index `i` (0-based), grouped per wish. */
export function byWish<T extends { i: number }>(rows: readonly T[], wishes: number): T[][] {
  const out = Array.from({ length: wishes }, (): T[] => []);
  for (const row of rows) out[row.i]!.push(row);
  return out;
}
