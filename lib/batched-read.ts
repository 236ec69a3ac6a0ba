import { CoalescedRead } from './coalesced-read.ts';
import { sql, type SqlFragment } from '../core/sql.ts';

/**
 * Reads of many callers answered together, each caller its own answer: every caller waiting at the
 * same moment joins one round (CoalescedRead: never one already under way, so what a caller gets was
 * read after its call began), and `query(shape, wishes)` answers all the round's wishes in one
 * statement, in order. Callers of different `shape`s (the statement their filters need) go in
 * separate rounds, so each statement keeps exact predicates and its indexes; a caller names its
 * shape from a fixed set. A failed statement fails its round's callers.
 */
export class BatchedRead<W, R> {
  private readonly rounds = new Map<string, CoalescedRead<Map<{ wish: W }, R>, { wish: W }>>();

  constructor(private readonly query: (shape: string, wishes: W[]) => Promise<R[]>) {}

  async read(shape: string, wish: W): Promise<R> {
    let rounds = this.rounds.get(shape);
    if (!rounds) {
      rounds = new CoalescedRead(async (calls) => {
        const answers = await this.query(
          shape,
          calls.map((c) => c.wish),
        );
        return new Map(calls.map((c, i) => [c, answers[i]!]));
      });
      this.rounds.set(shape, rounds);
    }
    // A call of its own: the same wish sent twice gets two answers.
    const call = { wish };
    return (await rounds.read(call)).get(call)!;
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
