import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';

/** Windows this seller reconciles billing against (digital display and video maturation stages). */
export const MEASUREMENT_WINDOWS = ['live', 'c3', 'c7', 'final', 'post_sivt'] as const;
/** Counts of two vendors never agree exactly: a tolerance below this cannot be honoured. */
export const MIN_VARIANCE_PERCENT = 5;

/** A buyer's proposed measurement terms on a package (core/measurement-terms.json). */
export const measurementTerms = v.looseObject({
  billing_measurement: v.optional(
    v.looseObject({
      vendor: v.optional(v.looseObject({ domain: v.pipe(v.string(), v.regex(/^[a-z0-9.-]{1,253}$/, 'must be a lowercase domain name')) })),
      max_variance_percent: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(99.99, 'must be below 100'))),
      measurement_window: v.optional(v.pipe(v.string(), v.maxLength(64))),
    }),
  ),
  makegood_policy: v.optional(v.looseObject({ available_remedies: v.optional(v.array(v.pipe(v.string(), v.maxLength(64)))) })),
});
export type MeasurementTerms = v.InferOutput<typeof measurementTerms>;

/**
 * Accept terms inside the seller's tolerance or refuse the buy with TERMS_REJECTED saying what is
 * unacceptable (the buyer corrects and retries). Nothing is written before this check.
 */
export function checkMeasurementTerms(terms: MeasurementTerms | undefined, field: string): void {
  const billing = terms?.billing_measurement;
  if (!billing) return;
  const problems: string[] = [];
  if (billing.measurement_window !== undefined && !(MEASUREMENT_WINDOWS as readonly string[]).includes(billing.measurement_window))
    problems.push(`measurement_window ${billing.measurement_window} is not one this seller reconciles against (${MEASUREMENT_WINDOWS.join(', ')})`);
  if (billing.max_variance_percent !== undefined && billing.max_variance_percent < MIN_VARIANCE_PERCENT)
    problems.push(`max_variance_percent must be at least ${MIN_VARIANCE_PERCENT}`);
  if (problems.length)
    throw new ProtocolError('TERMS_REJECTED', `${field}: ${problems.join('; ')}`, {
      field,
      suggestion: `Propose a window among ${MEASUREMENT_WINDOWS.join(', ')} and a variance of at least ${MIN_VARIANCE_PERCENT}%`,
    });
}
