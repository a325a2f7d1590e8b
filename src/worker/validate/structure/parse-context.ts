// What the StructureParser keeps while it reads one text, shared by the line handlers of each
// section kind: the current section, its server names and ACLs, and the ops recorded so far.
// Nothing here outlives a section except the ops, which is what makes a cut before a section
// opener exact (see ../phases.ts).
import { isBlank } from '../tokenizer.js';
import type { MapConverter } from '../map-converters.js';
import type { RefKind, Section, StructureOp } from './ops.js';

export class ParseContext {
  #ops: StructureOp[] = [];

  /** Set only by a section opener; null before the first one, as at the top of a file. */
  section: Section | null = null;
  /** Server names of the current proxy with their lines; cleared at each section (reused, not reallocated). */
  readonly servers = new Map<string, number>();
  /** ACL names declared so far in the current proxy; cleared at each section. */
  readonly acls = new Set<string>();
  /** Scratch list for findMapConverters(), reused for every word. */
  readonly converters: MapConverter[] = [];

  /** Starts a text: no section, no ops. */
  reset(): void {
    this.#ops = [];
    this.section = null;
    this.servers.clear();
    this.acls.clear();
  }

  /** The ops recorded since reset(); a fresh array per text, so callers may keep it. */
  ops(): StructureOp[] {
    return this.#ops;
  }

  push(op: StructureOp): void {
    this.#ops.push(op);
  }

  error(line: number, message: string): void {
    this.#ops.push({ op: 'error', line, message });
  }

  checkPath(kind: RefKind, raw: string, line: number): void {
    this.#ops.push({ op: 'path', line, kind, raw });
  }

  sectionRef(kind: string, name: string, line: number, what: string): void {
    this.#ops.push({ op: 'section-ref', line, kind, name, what });
  }

  where(): string {
    const s = this.section;
    if (s === null) return 'outside of any section';
    if (s.kind === 'global') return "in 'global' section";
    if (s.kind === 'defaults' && s.name === '') return "in anonymous 'defaults' section";
    return `in ${s.kind} '${s.name}'`;
  }

  unknownKeyword(keyword: string, lineNo: number, line: string): void {
    const indented = line.length > 0 && isBlank(line.charCodeAt(0));
    if (!indented) {
      this.error(lineNo, `unknown section or keyword '${keyword}' ${this.where()}`);
    } else {
      this.error(lineNo, `unknown keyword '${keyword}' ${this.where()}`);
    }
  }
}
