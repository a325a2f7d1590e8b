// Where a path named by the configuration lands among the rendered directories (maps, files,
// certs), and whether the render produced that file. Both phases resolve paths the same way:
// phase 'validation' to check references, phase 'auxiliary' to learn how each file is used.
import { posix } from 'node:path';
import type { AuxiliaryFiles, OutputPaths } from '../protocol.js';

export type { OutputPaths } from '../protocol.js';


export type DirKind = 'maps' | 'files' | 'certs';

/** Where a referenced path lands among the rendered directories. */
export type Resolved =
  | { readonly where: 'inside'; readonly dir: DirKind; readonly name: string; readonly path: string }
  | { readonly where: 'dir'; readonly dir: DirKind; readonly path: string }
  | { readonly where: 'outside'; readonly path: string }
  | { readonly where: 'relative'; readonly path: string };

export class PathResolver {
  readonly #dirs: readonly (readonly [DirKind, string])[];

  constructor(paths: OutputPaths) {
    this.#dirs = [
      ['maps', stripSlash(posix.normalize(paths.mapsDir))],
      ['files', stripSlash(posix.normalize(paths.filesDir))],
      ['certs', stripSlash(posix.normalize(paths.certsDir))],
    ];
  }

  /** `base` is the crt-base / ca-base that applies to relative paths, if any. */
  resolve(raw: string, base: string | null): Resolved {
    let path = raw;
    if (!path.startsWith('/')) {
      if (base === null) return { where: 'relative', path: raw };
      path = `${base}/${path}`;
    }
    path = stripSlash(posix.normalize(path));
    // The longest directory wins, in case one rendered directory nests inside another.
    let best: Resolved | null = null;
    let bestLength = -1;
    for (const [dir, dirPath] of this.#dirs) {
      if (dirPath.length <= bestLength) continue;
      if (path === dirPath) {
        best = { where: 'dir', dir, path };
        bestLength = dirPath.length;
      } else if (path.startsWith(dirPath === '/' ? '/' : `${dirPath}/`)) {
        best = { where: 'inside', dir, name: path.slice(dirPath === '/' ? 1 : dirPath.length + 1), path };
        bestLength = dirPath.length;
      }
    }
    return best ?? { where: 'outside', path };
  }
}

export function stripSlash(p: string): string {
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

export function auxRecord(aux: AuxiliaryFiles, dir: DirKind): Readonly<Record<string, string>> {
  return dir === 'maps' ? aux.maps : dir === 'files' ? aux.files : aux.certificates;
}

export function hasAux(aux: AuxiliaryFiles, dir: DirKind, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(auxRecord(aux, dir), name);
}
