/**
 * A tiny SQL builder shared by every database adapter: a tagged template that turns
 * interpolations into numbered parameters ($1, $2, ...) and lets fragments nest.
 * One dialect (Postgres) for both adapters, so features write SQL once.
 */
export class SqlFragment {
  /** Planned with each run's values, never from a cached generic plan (`sql.planEachRun`). */
  planEachRun = false;

  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}

  /** Render to `{text, values}` with numbered placeholders. */
  build(): { text: string; values: unknown[] } {
    const values: unknown[] = [];
    const text = this.render(values);
    return { text, values };
  }

  private render(values: unknown[]): string {
    let text = this.strings[0] ?? '';
    for (let i = 0; i < this.values.length; i++) {
      const value = this.values[i];
      if (value instanceof SqlFragment) text += value.render(values);
      else if (value instanceof RawSql) text += value.text;
      else {
        values.push(toParam(value));
        text += `$${values.length}`;
      }
      text += this.strings[i + 1] ?? '';
    }
    return text;
  }
}

/**
 * `statement` built and handed to `run` (a driver call): one that cannot be built rejects instead of
 * throwing, so an adapter's `query` always answers with a promise.
 */
export function runBuilt<T>(statement: SqlFragment, run: (text: string, values: unknown[]) => Promise<T>): Promise<T> {
  let built: { text: string; values: unknown[] };
  try {
    built = statement.build();
  } catch (error) {
    return Promise.reject(error);
  }
  return run(built.text, built.values);
}

class RawSql {
  constructor(readonly text: string) {}
}

/**
 * Values go to the driver as they are: both drivers serialize by the parameter type the server
 * reports, so cast in SQL (`$1::jsonb`, `$1::text[]`) and pass objects and arrays unchanged.
 */
function toParam(value: unknown): unknown {
  return value === undefined ? null : value;
}

export interface SqlTag {
  (strings: TemplateStringsArray, ...values: unknown[]): SqlFragment;
  /** Join fragments with a separator (default `, `). */
  join(parts: readonly SqlFragment[], separator?: string): SqlFragment;
  /** Trusted SQL text (identifiers, keywords). Never pass user input. */
  raw(text: string): SqlFragment;
  /** An empty fragment, handy for optional clauses. */
  empty: SqlFragment;
  /**
   * `statement`, planned by the server with each run's values rather than once for any values. For a
   * statement whose best plan depends on them, e.g. array overlaps matching 0.1% or 60% of the rows:
   * a generic plan picked for one run can cost a thousand times the right one for another. Costs a
   * planning, and on Postgres a Describe round trip, per run.
   */
  planEachRun(statement: SqlFragment): SqlFragment;
}

export const sql: SqlTag = Object.assign((strings: TemplateStringsArray, ...values: unknown[]) => new SqlFragment(strings, values), {
  join(parts: readonly SqlFragment[], separator = ', '): SqlFragment {
    if (parts.length === 0) return new SqlFragment([''], []);
    const strings = [''];
    for (let i = 1; i < parts.length; i++) strings.push(separator);
    strings.push('');
    return new SqlFragment(strings, parts);
  },
  raw(text: string): SqlFragment {
    return new SqlFragment(['', ''], [new RawSql(text)]);
  },
  empty: new SqlFragment([''], []),
  planEachRun(statement: SqlFragment): SqlFragment {
    const planned = new SqlFragment(statement.strings, statement.values);
    planned.planEachRun = true;
    return planned;
  },
});
