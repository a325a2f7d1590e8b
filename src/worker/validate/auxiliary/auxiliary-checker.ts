// The second step of phase 'auxiliary': checks each rendered file against how the configuration
// uses it. Maps have no empty values or repeated keys (unless only a pattern file); certificates
// are valid PEM with a private key unless only a CA; crt-lists name rendered certificates. Map
// issues and PEM summaries come through TextDerivations; key files and crt-lists depend on the
// other files, so they are checked afresh.
import type { AuxiliaryFiles } from '../../protocol.js';
import type { IssueSink } from '../issue-sink.js';
import { hasAux, type PathResolver } from '../paths.js';
import { forEachLine, tokenizeLine } from '../tokenizer.js';
import type { TextDerivations } from './text-derivations.js';
import type { AuxiliaryUsage } from './usage-state.js';

/** Companion files HAProxy loads next to a certificate; they are not certificates themselves. */
const CERT_COMPANION_SUFFIXES: readonly string[] = ['.key', '.ocsp', '.issuer', '.sctl'];

export class AuxiliaryChecker {
  readonly #aux: AuxiliaryFiles;
  readonly #usage: AuxiliaryUsage;
  readonly #sink: IssueSink;
  readonly #resolver: PathResolver;
  readonly #derive: TextDerivations;

  constructor(aux: AuxiliaryFiles, usage: AuxiliaryUsage, resolver: PathResolver, sink: IssueSink, derive: TextDerivations) {
    this.#aux = aux;
    this.#usage = usage;
    this.#sink = sink;
    this.#resolver = resolver;
    this.#derive = derive;
  }

  run(): void {
    const usage = this.#usage;
    for (const [name, text] of Object.entries(this.#aux.maps)) {
      if (typeof text !== 'string') {
        this.#sink.error(`maps/${name}`, undefined, 'map content is not text');
        continue;
      }
      for (const issue of this.#derive.mapIssues(text, usage.patternOnlyMaps.has(name))) {
        this.#sink.error(`maps/${name}`, issue.line, issue.message);
      }
      if (usage.crtLists.has(`maps/${name}`)) this.#checkCrtList(`maps/${name}`, text);
    }
    for (const [name, text] of Object.entries(this.#aux.files)) {
      if (typeof text !== 'string') {
        this.#sink.error(`files/${name}`, undefined, 'file content is not text');
        continue;
      }
      if (usage.crtLists.has(`files/${name}`)) this.#checkCrtList(`files/${name}`, text);
    }
    for (const [name, text] of Object.entries(this.#aux.certificates)) {
      if (typeof text !== 'string') {
        this.#sink.error(`certs/${name}`, undefined, 'certificate content is not text');
        continue;
      }
      if (usage.crtLists.has(`certs/${name}`)) this.#checkCrtList(`certs/${name}`, text);
      else this.#checkCertificate(name, text);
    }
  }

  #checkCertificate(name: string, text: string): void {
    const file = `certs/${name}`;
    if (name.endsWith('.ocsp') || name.endsWith('.sctl')) return;
    const pem = this.#derive.pem(text);
    if (pem.problem !== null) {
      this.#sink.error(file, pem.problemLine, pem.problem);
      return;
    }
    if (name.endsWith('.key')) {
      if (pem.keys === 0) this.#sink.error(file, undefined, 'no private key');
      return;
    }
    const usage = this.#usage;
    const companion = CERT_COMPANION_SUFFIXES.some((s) => name.endsWith(s));
    if (pem.certificates === 0 && !(pem.crls > 0 && usage.caOnlyCertificates.has(name))) {
      this.#sink.error(file, undefined, 'no certificate (expected a -----BEGIN CERTIFICATE----- block)');
      return;
    }
    if (companion) return;
    const caOnly = usage.caOnlyCertificates.has(name) && !usage.certsDirLoaded;
    const hasKeyFile = hasAux(this.#aux, 'certs', `${name}.key`) || hasAux(this.#aux, 'certs', `${stripExtension(name)}.key`);
    if (pem.keys === 0 && !caOnly && !hasKeyFile) {
      this.#sink.error(file, undefined, 'no private key');
    }
  }

  /** crt-lists are short and depend on the rendered certificates: checked afresh every time. */
  #checkCrtList(file: string, text: string): void {
    forEachLine(text, (line, lineNo) => {
      const w: string[] = [];
      const problem = tokenizeLine(line, w);
      if (problem !== null) {
        this.#sink.error(file, lineNo, problem);
        return;
      }
      const path = w[0];
      if (path === undefined) return;
      const open = line.indexOf('[');
      if (open >= 0 && line.indexOf(']', open) < 0) {
        this.#sink.error(file, lineNo, `unterminated '[' in crt-list options`);
      }
      const resolved = this.#resolver.resolve(path, this.#usage.crtBase);
      if (resolved.where === 'inside') {
        if (resolved.dir !== 'certs' || !hasAux(this.#aux, 'certs', resolved.name)) {
          this.#sink.error(file, lineNo, `references certificate '${resolved.path}', which is not produced by the render`);
        }
      } else if (resolved.where === 'dir') {
        this.#sink.error(file, lineNo, `references the directory '${resolved.path}', not a certificate file`);
      } else {
        this.#sink.warn(`${file}:${lineNo}: certificate '${resolved.path}' lies outside the rendered directories and was not checked`);
      }
    });
  }
}

function stripExtension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}
