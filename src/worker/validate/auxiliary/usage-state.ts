// Replays UsageOps in configuration order into an AuxiliaryUsage: which maps are only pattern
// files, which certificates only CAs, which files are crt-lists. crt-base and ca-base are the
// only state that crosses lines, so they are kept here, not in the scanner.
import { replayThrow } from '../issue-sink.js';
import type { PathResolver } from '../paths.js';
import type { UsageOp } from './usage-scanner.js';

/** How the configuration uses each rendered file, found by a light scan of the config text. */
export interface AuxiliaryUsage {
  /** Map names only ever referenced as ACL pattern files (`-f`): one column is fine there. */
  readonly patternOnlyMaps: ReadonlySet<string>;
  /** Certificates referenced only as CA or CRL files: no private key required. */
  readonly caOnlyCertificates: ReadonlySet<string>;
  /** Names (in files or certificates) referenced by `crt-list`. */
  readonly crtLists: ReadonlySet<string>;
  /** The certificates directory is loaded as a whole by `crt <dir>`. */
  readonly certsDirLoaded: boolean;
  readonly crtBase: string | null;
}

/** Replays UsageOps in configuration order. */
export class UsageState {
  readonly #resolver: PathResolver;
  readonly #mapRefs = new Map<string, { pattern: boolean; map: boolean }>();
  readonly #certRefs = new Map<string, { ca: boolean; crt: boolean }>();
  readonly #crtLists = new Set<string>();
  #certsDirLoaded = false;
  #crtBase: string | null = null;
  #caBase: string | null = null;

  constructor(resolver: PathResolver) {
    this.#resolver = resolver;
  }

  apply(ops: readonly UsageOp[]): void {
    for (const op of ops) {
      switch (op.u) {
        case 'crt-base':
          this.#crtBase = op.value;
          break;
        case 'ca-base':
          this.#caBase = op.value;
          break;
        case 'map':
          markMap(this.#mapRefs, op.name, op.how);
          break;
        case 'crt':
        case 'crt-list': {
          const r = this.#resolver.resolve(op.raw, this.#crtBase);
          if (r.where === 'dir' && r.dir === 'certs' && op.u === 'crt') this.#certsDirLoaded = true;
          if (r.where === 'inside') {
            if (op.u === 'crt-list') this.#crtLists.add(`${r.dir}/${r.name}`);
            else if (r.dir === 'certs') markCert(this.#certRefs, r.name, 'crt');
          }
          break;
        }
        case 'ca': {
          const r = this.#resolver.resolve(op.raw, this.#caBase);
          if (r.where === 'inside' && r.dir === 'certs') markCert(this.#certRefs, r.name, 'ca');
          break;
        }
        case 'throw':
          replayThrow(op.message);
      }
    }
  }

  usage(): AuxiliaryUsage {
    const patternOnlyMaps = new Set<string>();
    for (const [name, use] of this.#mapRefs) if (use.pattern && !use.map) patternOnlyMaps.add(name);
    const caOnlyCertificates = new Set<string>();
    for (const [name, use] of this.#certRefs) if (use.ca && !use.crt) caOnlyCertificates.add(name);
    return { patternOnlyMaps, caOnlyCertificates, crtLists: this.#crtLists, certsDirLoaded: this.#certsDirLoaded, crtBase: this.#crtBase };
  }
}

function markMap(refs: Map<string, { pattern: boolean; map: boolean }>, name: string, how: 'pattern' | 'map'): void {
  const use = refs.get(name) ?? { pattern: false, map: false };
  use[how] = true;
  refs.set(name, use);
}

function markCert(refs: Map<string, { ca: boolean; crt: boolean }>, name: string, how: 'ca' | 'crt'): void {
  const use = refs.get(name) ?? { ca: false, crt: false };
  use[how] = true;
  refs.set(name, use);
}
