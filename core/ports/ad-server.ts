import { token } from '../token.ts';
import type { Queryable } from './database.ts';
import type { PricingModel, ReportingFrequency } from './inventory.ts';

/** One line of an order: a package of a media buy as the ad server books it. */
export interface OrderLine {
  packageId: string;
  productId: string;
  budget: number;
  pricingModel: PricingModel;
  /** Price per unit of the pricing model (CPM, CPC...) or the flat fee. */
  rate: number;
  currency: string;
  /** Expected click-through rate of the product, 0..1. */
  ctr: number;
  /**
   * The share (0..1) of the product's inventory the package's targeting leaves: a property list keeps
   * only the publishers it names, so 0 never delivers. Booked lines default to 1; on `amend`, absent keeps the line's.
   */
  inventoryShare?: number;
}

export interface Order {
  mediaBuyId: string;
  owner: string;
  startTime: Date;
  endTime: Date;
  lines: OrderLine[];
}

/** The ad server's answer to a booking: approved now, after a review, or refused. */
export type Booking =
  | { decision: 'approved' }
  | { decision: 'pending_review'; reviewAt: Date }
  /** `code`: the protocol error code the buyer gets (default POLICY_VIOLATION). */
  | { decision: 'rejected'; reason: string; code?: string };

/** Serving state of lines: `live` delivers, `paused` holds, `ended` never delivers again. */
export type LineState = 'live' | 'paused' | 'ended';

export interface DeliveryFigures {
  impressions: number;
  /** In the line's currency, to the cent. */
  spend: number;
  clicks: number;
  /** Conversions attributed to the line (the buyer's logged events), and their value. */
  conversions?: number;
  conversionValue?: number;
}

/** A conversion the buyer reported (log_event), attributed by the ad server to a line serving at its time. */
export interface Conversion {
  /** Unique per buyer and event source: the ad server attributes each key once. */
  key: string;
  eventType: string;
  at: Date;
  /** In the line's currency (events in another currency carry no value). */
  value?: number;
  currency?: string;
}

/** Delivery of one window [start, end), as known at the time asked. */
export interface WindowReport {
  start: Date;
  end: Date;
  /** False while the window's data is still arriving (figures are partial). */
  ready: boolean;
  /** When the window's data is expected complete (set while not ready). */
  availableAt?: Date;
  lines: Array<DeliveryFigures & { packageId: string }>;
}

export type ImpairmentSeverity = 'general' | 'fraud' | 'brand_safety';

/** Something the ad server observed about a live order. */
export type AdServerEvent =
  | {
      type: 'impairment';
      mediaBuyId: string;
      packageIds: string[];
      resourceType: 'audience' | 'creative' | 'catalog_item' | 'event_source' | 'property';
      resourceId: string;
      severity: ImpairmentSeverity;
      /** `open`: the resource went offline; `resolved`: it is serviceable again. */
      state: 'open' | 'resolved';
      /** Offline state (impairment-offline-state) and reason code (impairment-reason-code). */
      offlineState: string;
      reasonCode: string;
      reason?: string;
      remediation?: string;
      observedAt: Date;
    }
  | {
      /** Figures of a past window changed (invalid-traffic filtering, late data restated). */
      type: 'delivery_adjusted';
      mediaBuyId: string;
      start: Date;
      end: Date;
      /** When the new figures took effect: reports made since then already carry them. */
      restatedAt: Date;
      reason: string;
    };

/** The windows a report covers. */
export type ReportWindows = ReadonlyArray<{ start: Date; end: Date }>;

/**
 * Where orders serve. Writes take the caller's transaction (`tx`): an adapter on the same
 * database commits with the media buy; a remote ad server ignores it and calls its API.
 * Contract: `report` never returns delivery after `asOf` nor beyond a line's budget, and figures
 * of a window add up across any partition of it (so windows and totals always agree).
 * Events reach subscribers inside a transaction of the adapter: a handler's writes commit with the
 * event's acknowledgment, and a throwing handler gets the event again later.
 * Adapters: ad-server-simulated (seedable delivery model driven by the Clock port).
 */
export interface AdServerPort {
  /** What the ad server can report: delay after a window closes, timezone, granularities. */
  readonly reporting: { expectedDelayMinutes: number; timezone: string; granularities: readonly ReportingFrequency[] };
  /** Whether booking this order waits for a review (creation then answers asynchronously); no side effect. */
  requiresReview(order: Order): boolean;
  /**
   * Book the order. Its writes on `tx` may still be in flight when the booking resolves: they are
   * the caller's transaction's (DatabasePort.transaction: its COMMIT follows them, and fails with them).
   */
  book(tx: Queryable, order: Order): Promise<Booking>;
  /** Outcome of a booking that was `pending_review` (still pending until its review time). */
  review(tx: Queryable, mediaBuyId: string): Promise<Booking>;
  /** Replace the flight dates and add or change lines (budgets, new packages). */
  amend(tx: Queryable, mediaBuyId: string, change: { startTime?: Date; endTime?: Date; lines?: OrderLine[] }): Promise<void>;
  /** Move lines (all of the order's when `packageIds` is absent) to a state from `at` on. */
  setState(tx: Queryable, mediaBuyId: string, state: LineState, at: Date, packageIds?: readonly string[]): Promise<void>;
  /**
   * Delivery of each window as known at `asOf`; reads through `q` (a caller's open transaction, or the pool).
   * `windows` may come later (a promise): the adapter starts its reads at once, beside the caller's own.
   */
  report(q: Queryable, mediaBuyId: string, windows: ReportWindows | PromiseLike<ReportWindows>, asOf: Date): Promise<WindowReport[]>;
  subscribe(handler: (tx: Queryable, event: AdServerEvent) => Promise<void>): void;
  /**
   * Attribute conversions to lines of these orders that were serving at each conversion's time
   * (one line each, none when nothing served then); a key attributed before is skipped. Reports
   * count them by conversion time as soon as they are recorded. Returns how many were attributed.
   */
  recordConversions(tx: Queryable, mediaBuyIds: readonly string[], conversions: readonly Conversion[]): Promise<number>;
}

export const AdServer = token<AdServerPort>('sales.ad-server');
