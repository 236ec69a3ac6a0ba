import { ProtocolError } from '../../core/errors.ts';

export interface SignalsErrorItem {
  code: string;
  message: string;
  field?: string;
  suggestion?: string;
}

/**
 * A signals failure with every problem listed (`{errors:[{code, message, field, suggestion}]}`),
 * with the seed's codes; in the `adcp` namespace the pipeline turns each into its standard AdCP code.
 */
export function signalsError(items: SignalsErrorItem[]): ProtocolError {
  const first = items[0]!;
  const status =
    first.code === 'SIGNAL_AGENT_SEGMENT_NOT_FOUND' || first.code === 'AGENT_NOT_FOUND'
      ? 404
      : first.code === 'ALREADY_ACTIVATED'
        ? 409
        : first.code.endsWith('UNAUTHORIZED') || first.code.endsWith('DENIED')
          ? 403
          : 400;
  const errors = items.map((i) => ({ ...i, recovery: 'correctable' }));
  return new ProtocolError(first.code, first.message, { status, field: first.field, suggestion: first.suggestion, extra: { errors } });
}
