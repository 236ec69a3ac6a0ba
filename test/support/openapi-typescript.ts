import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '../..');

/**
 * Run openapi-typescript on a document. It needs TypeScript's compiler API (`ts.factory`), which
 * TypeScript 7, the project's compiler, no longer ships; its peer range is ^5. The dev dependency
 * `typescript5` (TypeScript 5 under an alias) is linked as openapi-typescript's own nested
 * `typescript`, where Node's resolution looks first: what a package manager does for a peer the
 * root cannot satisfy.
 */
export function openapiTypescript(input: string, output: string): { code: number | null; err: string } {
  const nested = join(ROOT, 'node_modules/openapi-typescript/node_modules');
  if (!existsSync(join(nested, 'typescript'))) {
    mkdirSync(nested, { recursive: true });
    try {
      symlinkSync(join(ROOT, 'node_modules/typescript5'), join(nested, 'typescript'), 'dir');
    } catch (error) {
      // Another test process linked it meanwhile.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const p = Bun.spawnSync(['node', join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), input, '-o', output], {
    cwd: ROOT,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  return { code: p.exitCode, err: p.stderr.toString() };
}
