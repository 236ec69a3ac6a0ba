import * as v from 'valibot';

const configuredKey = v.pipe(
  v.object({
    kid: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 . _ : -')),
    /** Private JWK (with `d`). */
    jwk: v.optional(v.record(v.string(), v.unknown())),
    /** Path of a PKCS#8 PEM private key. */
    pemFile: v.optional(v.pipe(v.string(), v.minLength(1))),
    status: v.optional(v.picklist(['active', 'published', 'revoked']), 'published'),
  }),
  v.check((k) => (k.jwk ? 1 : 0) + (k.pemFile ? 1 : 0) === 1, 'give exactly one of jwk or pemFile'),
);

export const signerOptions = v.object({
  /** The algorithm of the keys (RFC 9421 name): Ed25519, or ECDSA P-256 with SHA-256 (raw r||s signatures). */
  alg: v.optional(v.picklist(['ed25519', 'ecdsa-p256-sha256']), 'ed25519'),
  /** Keys from configuration; when absent, keys are generated on first start and kept in the database. */
  keys: v.optional(v.array(configuredKey)),
  /** Extra revoked key ids (beside keys revoked in the database). */
  revoked: v.optional(v.array(v.string()), []),
  /** How often each instance reloads keys from the database (rotation done elsewhere shows up). */
  reloadSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 60),
  /** Max-age of the JWKS response. */
  jwksMaxAgeSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 300),
});

export type SignerOptions = v.InferInput<typeof signerOptions>;
