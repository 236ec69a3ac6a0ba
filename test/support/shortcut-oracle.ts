import * as v from 'valibot';

/** Every member path of `x` (objects and arrays), depth first: where a one-member mutation can go. */
export function* memberPaths(x: unknown, at: (string | number)[] = []): Generator<(string | number)[]> {
  if (typeof x !== 'object' || x === null) return;
  for (const key of Object.keys(x)) {
    yield [...at, key];
    yield* memberPaths((x as any)[key], [...at, key]);
  }
}

/** A copy of `seed` with the member at `path` set to `value` (deleted for undefined). */
export function mutate(seed: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(seed) as any;
  let o = copy;
  for (const key of path.slice(0, -1)) o = o[key];
  if (value === undefined) delete o[path.at(-1)!];
  else o[path.at(-1)!] = value;
  return copy;
}

/** What a schema answers: its output, or its first issue's message and path (to compare a shortcut with the schema). */
export const schemaAnswer = (schema: v.GenericSchema, input: unknown) => {
  const r = v.safeParse(schema, input, { abortPipeEarly: true });
  return r.success ? { ok: true, output: r.output } : { ok: false, message: r.issues[0].message, path: v.getDotPath(r.issues[0]) };
};
