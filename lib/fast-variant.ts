import * as v from 'valibot';

/**
 * `schema` (a valibot variant whose options are objects with a literal discriminator) answering
 * by a lookup of the discriminator: valibot's variant tries the options in order and records an
 * issue for each one whose literal does not match, which dominates validating many small objects
 * (the assets of a manifest). Same output and issues: a known discriminator runs its one option,
 * as the variant would; anything else (unknown or missing discriminator, not an object) runs the
 * variant itself.
 */
export function fastVariant<S extends v.VariantSchema<string, v.VariantOptions<string>, v.ErrorMessage<v.VariantIssue> | undefined>>(schema: S): S {
  const byValue = new Map<unknown, S['options'][number]>();
  for (const option of schema.options) {
    // A nested variant, a non-literal or a repeated discriminator: valibot tries those in order, keep it.
    if (option.type === 'variant') return schema;
    const discriminator = option.entries[schema.key] as v.GenericSchema & { literal?: unknown };
    if (discriminator?.type !== 'literal' || byValue.has(discriminator.literal)) return schema;
    byValue.set(discriminator.literal, option);
  }
  const run: S['~run'] = (dataset, config) => {
    const input = dataset.value;
    const option = input && typeof input === 'object' ? byValue.get((input as Record<string, unknown>)[schema.key]) : undefined;
    return option ? option['~run']({ value: input }, config) : schema['~run'](dataset, config);
  };
  return { ...schema, '~run': run, '~standard': { ...schema['~standard'], validate: (value) => run({ value }, v.getGlobalConfig()) } };
}
