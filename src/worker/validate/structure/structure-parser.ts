// Phase 'validation', first half: reads one text line by line and records its StructureOps.
// Each line is tokenized once and handed to the handler of its section kind (global, proxy or
// another section); the parser itself only recognises directives and section openers. The ops
// depend on the text alone, so IncrementalValidator parses each distinct chunk text once.
import { describe } from '../issue-sink.js';
import { CONDITIONAL_DIRECTIVES, GLOBAL_KEYWORDS, PROXY_FAMILIES, PROXY_KEYWORDS, SECTION_KINDS, type SectionKind } from '../keywords.js';
import { forEachLine, tokenizeLine } from '../tokenizer.js';
import { globalLine } from './global-lines.js';
import type { StructureOp } from './ops.js';
import { ParseContext } from './parse-context.js';
import { proxyLine } from './proxy-lines.js';
import { openSection, otherSectionLine } from './sections.js';

/** Parses one text (a whole configuration, or a piece of one) into its StructureOps. */
export function parseStructure(text: string): readonly StructureOp[] {
  return new StructureParser().parse(text);
}

export class StructureParser {
  readonly #context = new ParseContext();
  readonly #words: string[] = [];

  /** The ops of `text`, parsed from a clean state: no section yet, as at the top of a file. */
  parse(text: string): readonly StructureOp[] {
    const p = this.#context;
    p.reset();
    try {
      forEachLine(text, (line, lineNo) => this.#line(line, lineNo));
    } catch (err) {
      p.push({ op: 'throw', message: describe(err) });
    }
    return p.ops();
  }

  #line(line: string, lineNo: number): void {
    const p = this.#context;
    const w = this.#words;
    const problem = tokenizeLine(line, w);
    if (problem !== null) {
      p.error(lineNo, problem);
      return;
    }
    if (w.length === 0) return;
    const keyword = w[0] as string;
    if (keyword.startsWith('.')) {
      // Conditional blocks are not evaluated: every branch is checked as if it applied.
      if (!CONDITIONAL_DIRECTIVES.has(keyword)) p.error(lineNo, `unknown directive '${keyword}'`);
      return;
    }
    if (SECTION_KINDS.has(keyword)) {
      openSection(p, keyword as SectionKind, w, lineNo);
      return;
    }
    const section = p.section;
    if (section === null) {
      const known = GLOBAL_KEYWORDS.has(keyword) || PROXY_KEYWORDS.has(keyword) || PROXY_FAMILIES.has(keyword);
      p.error(lineNo, known ? `keyword '${keyword}' outside of any section` : `unknown section '${keyword}'`);
      return;
    }
    switch (section.kind) {
      case 'global':
        globalLine(p, w, lineNo, line);
        return;
      case 'defaults':
      case 'frontend':
      case 'backend':
      case 'listen':
        proxyLine(p, section, w, lineNo, line);
        return;
      default:
        otherSectionLine(p, section, w, lineNo, line);
    }
  }
}
