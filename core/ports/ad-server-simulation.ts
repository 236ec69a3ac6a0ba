import { token } from '../token.ts';
import type { Queryable } from './database.ts';
import type { DeliveryFigures } from './ad-server.ts';

/**
 * Test controls of a simulated ad server: figures injected as if delivered, for sandbox buyers
 * who cannot wait for real time. Provided by ad-server-simulated only; a real ad server has none.
 * Injected figures count at `at` in every report read at or after it (no reporting delay), and
 * are part of the line's spend for its budget.
 */
export interface AdServerSimulationPort {
  addDelivery(tx: Queryable, mediaBuyId: string, packageId: string, figures: DeliveryFigures, at: Date): Promise<void>;
}

export const AdServerSimulation = token<AdServerSimulationPort>('sales.ad-server-simulation');
