// Locations of the files bundled with the package (templates/, examples/), from the source tree
// (src/main) and from the build (dist/src/main) alike.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'templates'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new Error('cannot locate the package root (templates/ next to package.json)');
}

export const PACKAGE_ROOT = packageRoot();
export const DEFAULT_TEMPLATE_SET_PATH = join(PACKAGE_ROOT, 'templates', 'default.yaml');
export const EXAMPLES_DIR = join(PACKAGE_ROOT, 'examples', 'cluster');
