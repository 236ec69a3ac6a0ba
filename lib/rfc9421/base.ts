import { canonicalTarget } from './target-uri.ts';

export interface RequestView {
  method: string;
  /** Absolute URL as received (or about to be sent). */
  url: string;
  headers: Headers;
}

export class ComponentMissing extends Error {}

/** Value of one covered component (RFC 9421 section 2). Throws TargetUriError for a malformed URL. */
export function componentValue(name: string, request: RequestView): string {
  switch (name) {
    case '@method':
      return request.method;
    case '@target-uri':
      return canonicalTarget(request.url).targetUri;
    case '@authority':
      return canonicalTarget(request.url).authority;
    default: {
      if (name.startsWith('@')) throw new ComponentMissing(`derived component ${name} is not supported`);
      const value = request.headers.get(name);
      if (value === null) throw new ComponentMissing(`covered header ${name} is absent`);
      return value.trim();
    }
  }
}

/** RFC 9421 section 2.5 signature base: one line per component, then `@signature-params`, no trailing newline. */
export function signatureBase(components: readonly string[], paramsValue: string, request: RequestView): string {
  const lines = components.map((c) => `"${c}": ${componentValue(c, request)}`);
  lines.push(`"@signature-params": ${paramsValue}`);
  return lines.join('\n');
}
