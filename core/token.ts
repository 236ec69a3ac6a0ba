/**
 * A typed dependency token. The id is a registered symbol so two copies of a module
 * still agree on it; the phantom type carries what the container will hand back.
 */
export interface Token<T> {
  readonly id: symbol;
  readonly name: string;
  /** Phantom field: never set, only used by the type checker. */
  readonly __type?: T;
}

export function token<T>(name: string): Token<T> {
  return { id: Symbol.for(name), name };
}
