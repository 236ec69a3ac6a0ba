import { v7 } from 'uuid';
import { token } from '../token.ts';

/** Id generation. `uuid7()` is monotonic within a process, even within one millisecond. */
export interface IdsPort {
  uuid7(): string;
  uuid4(): string;
}

export const Ids = token<IdsPort>('core.ids');

export const defaultIds: IdsPort = {
  uuid7: () => v7(),
  uuid4: () => crypto.randomUUID(),
};
