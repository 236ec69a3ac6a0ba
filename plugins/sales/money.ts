/** An amount of money rounded to the cent (what answers and stored totals carry). */
export const cents = (x: number) => Math.round(x * 100) / 100;
