import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { SalesAccountsPort } from '../../core/ports/sales-accounts.ts';
import type { CreativePackages } from '../../core/ports/seller-creatives.ts';
import type { FormatResolver } from './formats.ts';

/** Everything the creative tasks and the port share (built once in init). */
export interface CreativesDeps {
  db: DatabasePort;
  clock: ClockPort;
  accounts: SalesAccountsPort;
  formats: FormatResolver;
  /** The media buys' packages, once attached (SellerCreatives.attach); absent: assignments are refused. */
  packages: () => CreativePackages | undefined;
  options: { sandbox: boolean };
}
