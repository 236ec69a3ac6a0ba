/** UTC calendar arithmetic of the billing cycle (this seller bills per UTC calendar month). */

export const DAY = 86_400_000;

/** The UTC date of an instant, YYYY-MM-DD. */
export const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** Midnight UTC of the first day of `d`'s month. */
export const monthStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));

/** The first of the month `n` months after (before, when negative) `d`'s month. */
export const addMonths = (d: Date, n: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));
