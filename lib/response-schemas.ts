import * as v from 'valibot';

/**
 * Building blocks of documented response bodies (OpenAPI `responses`, tested against real answers).
 * Objects are open (`looseObject`): a documented field is always there with its type, and answers
 * may grow fields without breaking clients.
 */
export const str = v.string();
export const int = v.pipe(v.number(), v.integer());
export const num = v.number();
export const bool = v.boolean();
export const time = v.pipe(v.string(), v.isoTimestamp());
export const any = v.unknown();
export const strings = v.array(v.string());
export const obj = v.looseObject;
export const arr = v.array;
export const nul = v.nullable;
export const opt = v.optional;

/** A JSON object whose members are not described (documents relayed as they are). */
export const anyObject = v.looseObject({});

/** An issue found by schema validation. */
export const issue = v.looseObject({ path: v.optional(v.string()), message: v.string() });
