import * as v from 'valibot';

/** enums/payment-terms.json (the same in 3.0 and 3.1). */
export const PAYMENT_TERMS = ['net_15', 'net_30', 'net_45', 'net_60', 'net_90', 'prepay'] as const;

/** core/account.json credit_limit: the most the account may owe, in one currency. */
export const creditLimit = v.object({
  amount: v.pipe(v.number('must be a number'), v.minValue(0, 'must not be negative'), v.maxValue(1e12, 'must be at most 1e12')),
  currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')),
});
