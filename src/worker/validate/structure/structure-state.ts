// Phase 'validation', second half: replays StructureOps in configuration order against the
// state of the whole configuration (proxies, defaults and named sections, bind addresses,
// crt-base / ca-base) and owns the IssueSink, so the error cap, the deduplicated path warnings
// and the order of issues are those of one pass. finish() checks the references collected on
// the way, which may point forwards.
import type { AuxiliaryFiles } from '../../protocol.js';
import { mapEntriesOf } from '../auxiliary/map-file.js';
import type { TextDerivations } from '../auxiliary/text-derivations.js';
import { CONFIG_FILE, replayThrow, type IssueSink } from '../issue-sink.js';
import type { SectionKind } from '../keywords.js';
import type { MapConverter } from '../map-converters.js';
import { auxRecord, hasAux, PathResolver, type DirKind, type Resolved, type OutputPaths } from '../paths.js';
import type { RefKind, Section, StructureOp } from './ops.js';

interface ProxyEntry {
  readonly kind: 'frontend' | 'backend' | 'listen';
  readonly name: string;
  readonly line: number;
}

interface BackendReference {
  readonly name: string;
  readonly line: number;
  readonly keyword: string;
  readonly proxy: string;
}

interface MapBackendReference {
  readonly dir: DirKind;
  readonly mapName: string;
  readonly line: number;
  readonly keyword: string;
  readonly proxy: string;
}

interface NamedReference {
  readonly name: string;
  readonly line: number;
  readonly what: string;
}

/** Replays StructureOps in configuration order; owns the state of the whole configuration. */
export class StructureState {
  #aux: AuxiliaryFiles;
  #sink: IssueSink;
  readonly #resolver: PathResolver;
  #derive: TextDerivations;

  /** frontend/backend/listen names; a name may be held once per capability. */
  readonly #frontends = new Map<string, ProxyEntry>();
  readonly #backends = new Map<string, ProxyEntry>();
  readonly #defaults = new Set<string>();
  /** Other named sections by kind: resolvers, cache, peers, ... */
  readonly #namedSections = new Map<string, Map<string, number>>();
  readonly #binds = new Map<string, { proxy: string; line: number }>();

  readonly #backendRefs: BackendReference[] = [];
  readonly #mapBackendRefs: MapBackendReference[] = [];
  readonly #sectionRefs: { kind: string; ref: NamedReference }[] = [];
  /** Outcome of each distinct referenced path, so a path repeated in 10,000 backends costs once. */
  readonly #pathVerdicts = new Map<string, { resolved: Resolved; verdict: string | null }>();
  readonly #warnedPaths = new Set<string>();

  /** Distinct-value lists of maps in which every value names one of `#backends` (which finish() never changes). */
  readonly #allNamed = new WeakSet<string[]>();

  #crtBase: string | null = null;
  #caBase: string | null = null;

  constructor(aux: AuxiliaryFiles, paths: OutputPaths, sink: IssueSink, derive: TextDerivations) {
    this.#aux = aux;
    this.#sink = sink;
    this.#resolver = new PathResolver(paths);
    this.#derive = derive;
  }

  #error(line: number, message: string): void {
    this.#sink.error(CONFIG_FILE, line, message);
  }

  /** Replays the ops of a text whose first line is line `offset + 1` of the configuration. */
  apply(ops: readonly StructureOp[], offset: number): void {
    for (const op of ops) {
      switch (op.op) {
        case 'error':
          this.#error(op.line + offset, op.message);
          break;
        case 'error-at':
          this.#error(op.line + offset, `${op.head}${op.at + offset}${op.tail}`);
          break;
        case 'from':
          if (!this.#defaults.has(op.from)) {
            this.#error(
              op.line + offset,
              `${op.kind} ${op.name === '' ? '' : `'${op.name}' `}uses unknown defaults section '${op.from}' (it must be declared above)`,
            );
          }
          break;
        case 'proxy':
          this.#registerProxy(op.kind, op.name, op.line + offset);
          break;
        case 'defaults':
          this.#defaults.add(op.name);
          break;
        case 'section':
          this.#registerSection(op.kind, op.name, op.line + offset);
          break;
        case 'bind':
          this.#bind(op.addr, op.section, op.line + offset);
          break;
        case 'path':
          this.#checkPath(op.kind, op.raw, op.line + offset);
          break;
        case 'map-target':
          this.#mapTarget(op.conv, op.keyword, op.proxy, op.line + offset);
          break;
        case 'backend-ref':
          this.#backendRefs.push({ name: op.name, line: op.line + offset, keyword: op.keyword, proxy: op.proxy });
          break;
        case 'section-ref':
          this.#sectionRefs.push({ kind: op.kind, ref: { name: op.name, line: op.line + offset, what: op.what } });
          break;
        case 'crt-base':
          this.#crtBase = op.value;
          break;
        case 'ca-base':
          this.#caBase = op.value;
          break;
        case 'throw':
          replayThrow(op.message);
      }
    }
  }

  /**
   * The state replayed for another call with the same configuration: its files (`aux`, whose
   * names must be those the replay saw: the replay reads which files exist, finish() reads
   * their content), its sink and derivations. finish() leaves the replayed state as it was.
   */
  rebind(aux: AuxiliaryFiles, sink: IssueSink, derive: TextDerivations): void {
    this.#aux = aux;
    this.#sink = sink;
    this.#derive = derive;
  }

  /** After the last line: references may point forwards, so they are checked at the end. */
  finish(): void {
    this.#checkBackendReferences();
    this.#checkSectionReferences();
  }

  /**
   * HAProxy's rule: a frontend and a backend may share a name, but no two proxies with a common
   * capability may (so a listen clashes with everything of its name).
   */
  #registerProxy(kind: 'frontend' | 'backend' | 'listen', name: string, lineNo: number): void {
    const entry: ProxyEntry = { kind, name, line: lineNo };
    const asFrontend = kind !== 'backend';
    const asBackend = kind !== 'frontend';
    const clash = (asFrontend ? this.#frontends.get(name) : undefined) ?? (asBackend ? this.#backends.get(name) : undefined);
    if (clash !== undefined) {
      this.#error(lineNo, `${kind} '${name}' has the same name as ${clash.kind} '${name}' declared at line ${clash.line}`);
      return;
    }
    if (asFrontend) this.#frontends.set(name, entry);
    if (asBackend) this.#backends.set(name, entry);
  }

  #registerSection(kind: SectionKind, name: string, lineNo: number): void {
    // userlist duplicates are ignored by HAProxy with a warning; the others are fatal.
    let byName = this.#namedSections.get(kind);
    if (byName === undefined) {
      byName = new Map();
      this.#namedSections.set(kind, byName);
    }
    const previous = byName.get(name);
    if (previous !== undefined) {
      if (kind === 'userlist') {
        this.#sink.warn(`${CONFIG_FILE}:${lineNo}: duplicate userlist '${name}' is ignored (first declared at line ${previous})`);
      } else {
        this.#error(lineNo, `${kind} section '${name}' has the same name as the one declared at line ${previous}`);
      }
    } else {
      byName.set(name, lineNo);
    }
  }

  #bind(addr: string, section: Section, lineNo: number): void {
    const previous = this.#binds.get(addr);
    if (previous !== undefined && previous.proxy !== section.name) {
      this.#sink.warn(
        `${CONFIG_FILE}:${lineNo}: bind address '${addr}' in ${section.kind} '${section.name}' is also bound by '${previous.proxy}' at line ${previous.line}`,
      );
    } else if (previous === undefined) {
      this.#binds.set(addr, { proxy: section.name, line: lineNo });
    }
  }

  /** A map converter in a backend target: the map is checked, and routes to its backends. */
  #mapTarget(conv: MapConverter, keyword: string, proxy: string, lineNo: number): void {
    const verdict = this.#checkPath('map', conv.path, lineNo);
    if (!conv.isWholeExpression) return;
    if (conv.defaultValue !== undefined && conv.defaultValue !== '') {
      this.#backendRefs.push({ name: conv.defaultValue, line: lineNo, keyword: `${keyword} map default`, proxy });
    }
    if (verdict !== null && verdict.where === 'inside' && conv.outputsString && hasAux(this.#aux, verdict.dir, verdict.name)) {
      this.#mapBackendRefs.push({ dir: verdict.dir, mapName: verdict.name, line: lineNo, keyword, proxy });
    }
  }

  /**
   * Checks one referenced path against the rendered directories. Returns where it resolved, or
   * null when the reference cannot be resolved (relative without a base).
   */
  #checkPath(kind: RefKind, raw: string, lineNo: number): Resolved | null {
    if (raw === '' || raw.indexOf('${') >= 0 || raw.indexOf('%[') >= 0) return null;
    const base = kind === 'crt' || kind === 'crt-list' ? this.#crtBase : kind === 'ca-file' || kind === 'crl-file' ? this.#caBase : null;
    const cacheKey = `${kind}\u0000${base ?? ''}\u0000${raw}`;
    let known = this.#pathVerdicts.get(cacheKey);
    if (known === undefined) {
      const resolved = this.#resolver.resolve(raw, base);
      known = { resolved, verdict: this.#pathVerdict(kind, resolved) };
      this.#pathVerdicts.set(cacheKey, known);
      if (resolved.where === 'outside' || resolved.where === 'relative') {
        if (!this.#warnedPaths.has(resolved.path)) {
          this.#warnedPaths.add(resolved.path);
          this.#sink.warn(
            resolved.where === 'outside'
              ? `${CONFIG_FILE}:${lineNo}: ${kind} '${resolved.path}' lies outside the rendered directories and was not checked`
              : `${CONFIG_FILE}:${lineNo}: relative ${kind} path '${resolved.path}' was not checked`,
          );
        }
      }
    }
    if (known.verdict !== null) this.#error(lineNo, known.verdict);
    return known.resolved;
  }

  #pathVerdict(kind: RefKind, resolved: Resolved): string | null {
    if (resolved.where === 'dir') {
      if (kind === 'crt' && resolved.dir === 'certs') {
        return Object.keys(this.#aux.certificates).length > 0
          ? null
          : `crt names the certificates directory '${resolved.path}' but no certificate was rendered`;
      }
      return `${kind} '${resolved.path}' names a directory, not a file`;
    }
    if (resolved.where !== 'inside') return null;
    if (hasAux(this.#aux, resolved.dir, resolved.name)) return null;
    return `${kind} '${resolved.path}' is not produced by the render (no ${resolved.dir}/${resolved.name})`;
  }

  #checkBackendReferences(): void {
    for (const ref of this.#backendRefs) {
      if (!this.#backends.has(ref.name)) {
        const isFrontendOnly = this.#frontends.has(ref.name);
        this.#error(
          ref.line,
          `${ref.keyword} in ${ref.proxy === '' ? 'defaults' : `'${ref.proxy}'`} names ${isFrontendOnly ? 'frontend' : 'unknown backend'} '${ref.name}'`,
        );
      }
    }
    // Each map is read once, however many rules route through it; its entries are reported
    // against the first rule that uses it.
    const checked = new Set<string>();
    for (const ref of this.#mapBackendRefs) {
      const file = `${ref.dir}/${ref.mapName}`;
      if (checked.has(file)) continue;
      checked.add(file);
      const text = auxRecord(this.#aux, ref.dir)[ref.mapName] ?? '';
      const { lines, keys, values, distinctValues } = typeof text === 'string' ? this.#derive.mapEntries(text) : mapEntriesOf(text);
      if (distinctValues !== undefined && this.#allBackends(distinctValues)) continue;
      for (let i = 0; i < values.length; i++) {
        const value = values[i] as string;
        if (this.#backends.has(value)) continue;
        this.#error(
          ref.line,
          `${ref.keyword} routes through ${file}, whose line ${lines[i]} ('${keys[i]}') names unknown backend '${value}'`,
        );
      }
    }
  }

  /** Whether every value names a backend; see MapEntries.distinctValues. */
  #allBackends(values: string[]): boolean {
    // The same list (a map whose distinct values did not change) against the same backends
    // (finish() after a kept replay, see rebind): found before, nothing to look up again.
    if (this.#allNamed.has(values)) return true;
    for (let i = 0; i < values.length; i++) {
      const backend = this.#backends.get(values[i] as string);
      if (backend === undefined) return false;
      values[i] = backend.name;
    }
    this.#allNamed.add(values);
    return true;
  }

  #checkSectionReferences(): void {
    for (const { kind, ref } of this.#sectionRefs) {
      if (this.#namedSections.get(kind)?.has(ref.name) !== true) {
        this.#error(ref.line, `${ref.what} names unknown ${kind} section '${ref.name}'`);
      }
    }
  }
}
