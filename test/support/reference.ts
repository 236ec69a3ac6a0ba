import { join } from 'node:path';

/** The AdCP reference data the tests read (schemas, conformance vectors, formats), inside the repository. */
export const REFERENCE = join(import.meta.dir, '../fixtures/adcp');
