/**
 * Binary values of the webhook profile. The profile writes byte sequences as base64url without
 * padding (RFC 8941 sf-binary is standard base64); verifiers accept either alphabet but never a
 * token that mixes them, and compare decoded bytes.
 */
export function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** Decode one sf-binary token body; null when it is not valid base64 or base64url (or mixes them). */
export function decodeBinaryToken(token: string): Uint8Array | null {
  const url = /[-_]/.test(token);
  const std = /[+/]/.test(token);
  if (url && std) return null;
  const body = token.replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/_-]*$/.test(body) || body.length % 4 === 1) return null;
  if (token.length !== body.length && token.length % 4 !== 0) return null; // bad padding
  return new Uint8Array(Buffer.from(body.replaceAll('-', '+').replaceAll('_', '/'), 'base64'));
}

/**
 * Rewrite `=:token:` byte sequences of a dictionary header to padded standard base64 so the
 * structured-field parser accepts them; returns null when a token is malformed.
 */
export function normalizeBinaryDictionary(header: string): string | null {
  let bad = false;
  const out = header.replace(/=:([^:]*):/g, (_m, token: string) => {
    const bytes = decodeBinaryToken(token);
    if (!bytes) {
      bad = true;
      return '=:!:';
    }
    return `=:${Buffer.from(bytes).toString('base64')}:`;
  });
  return bad ? null : out;
}
