import * as v from 'valibot';

/**
 * `schema` with a shortcut for the common, valid input: when `accepts(input)` (a hand-written
 * check that only ever says yes to input the schema accepts unchanged) the input is the output, and
 * valibot's walk (a copy of every object, an issue list per union member) is skipped. Anything else
 * runs the schema itself, so rejected input gets the schema's very issues. Only for schemas without
 * transforms or defaults: their output equals their input (up to key order).
 */
export function fastAccept<S extends v.GenericSchema>(schema: S, accepts: (input: unknown) => boolean): S {
  const run = ((dataset: { value: unknown }, config: v.Config<v.BaseIssue<unknown>>) =>
    accepts(dataset.value) ? { typed: true, value: dataset.value } : schema['~run'](dataset, config)) as S['~run'];
  return { ...schema, '~run': run, '~standard': { ...schema['~standard'], validate: (value: unknown) => run({ value }, v.getGlobalConfig()) } };
}

/**
 * A non-array object that valibot's object schemas copy member for member (they leave out members named
 * `__proto__`, `prototype` and `constructor`): what a shortcut may accept as it is.
 */
export const isPlainInput = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' &&
  x !== null &&
  !Array.isArray(x) &&
  !Object.hasOwn(x, '__proto__') &&
  !Object.hasOwn(x, 'prototype') &&
  !Object.hasOwn(x, 'constructor');
