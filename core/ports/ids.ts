import { v7 } from 'uuid';
import { token } from '../token.ts';

/**
 * Id generation: lower-case RFC 9562 UUIDs. `uuid7()` is strictly increasing within a process, even
 * within one millisecond. Contract: test/contract/ids.contract.ts.
 */
export interface IdsPort {
  uuid7(): string;
  uuid4(): string;
}

export const Ids = token<IdsPort>('core.ids');

export const defaultIds: IdsPort = {
  uuid7: () => v7(),
  uuid4: () => crypto.randomUUID(),
};
