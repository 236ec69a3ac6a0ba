import * as v from 'valibot';

const block = v.optional(v.record(v.string(), v.unknown(), 'must be an object'));

/**
 * The core of a `get_{ns}_capabilities` answer that both AdCP 3.0.6 and 3.1.19 require: the
 * namespace block with `major_versions` (integers >= 1, at least one) and `supported_protocols`
 * (at least one); protocol blocks, when present, are objects.
 */
export function capabilitiesSchema(namespace: string) {
  return v.looseObject({
    [namespace]: v.looseObject(
      {
        major_versions: v.pipe(
          v.array(v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1')), 'must be an array'),
          v.minLength(1, 'must list at least one version'),
        ),
      },
      'is required (an object)',
    ),
    supported_protocols: v.pipe(v.array(v.string('must be a string'), 'is required (an array)'), v.minLength(1, 'must list at least one protocol')),
    media_buy: block,
    signals: block,
    creative: block,
    governance: block,
    brand: block,
    account: block,
  });
}

export interface ConformanceIssue {
  path: string;
  message: string;
}

/** Conformance issues of an answer (empty when it conforms); at most 20. */
export function conformanceIssues(schema: ReturnType<typeof capabilitiesSchema>, answer: unknown): ConformanceIssue[] {
  const result = v.safeParse(schema, answer, { abortEarly: false });
  if (result.success) return [];
  return result.issues.slice(0, 20).map((i) => ({ path: `/${(i.path ?? []).map((p) => String(p.key)).join('/')}`, message: i.message.slice(0, 300) }));
}
