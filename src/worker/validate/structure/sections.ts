// Section headers, and the lines of sections other than global and the proxies. An opener
// resets all of the parser's per-section state and records how the section registers
// (a proxy, a defaults, another named section); resolvers, userlist, peers, cache, ring and the
// rest get their keyword list checked and the few arguments worth checking.
import { NAMED_SECTIONS, OTHER_SECTION_KEYWORDS, type SectionKind } from '../keywords.js';
import { isIntegerArg, isSizeArg, isValidName } from '../tokenizer.js';
import type { Section } from './ops.js';
import type { ParseContext } from './parse-context.js';
import { errorfile } from './references.js';
import { serverLine } from './server-lines.js';

/** Resets all of the parser's own state: what makes a cut before this line exact. */
export function openSection(p: ParseContext, kind: SectionKind, w: readonly string[], lineNo: number): void {
  p.servers.clear();
  p.acls.clear();
  let name = '';
  let argIndex = 1;
  if (kind === 'global' || kind === 'namespace_list') {
    if (w.length > 1) p.error(lineNo, `'${kind}' takes no arguments (got '${w[1]}')`);
  } else if (kind === 'defaults') {
    if (w.length > 1 && w[1] !== 'from') {
      name = w[1] as string;
      argIndex = 2;
    }
  } else if (NAMED_SECTIONS.has(kind)) {
    name = w[1] ?? '';
    argIndex = 2;
    if (name === '') {
      p.error(lineNo, `'${kind}' section requires a name`);
    }
  }
  if (name !== '' && !isValidName(name)) {
    p.error(
      lineNo,
      `invalid ${kind} name '${name}': only letters, digits, '-', '_', '.' and ':' are allowed`,
    );
  }
  const isProxy = kind === 'defaults' || kind === 'frontend' || kind === 'backend' || kind === 'listen';
  if (isProxy && w[argIndex] === 'from') {
    const from = w[argIndex + 1];
    if (from === undefined) p.error(lineNo, `'from' expects the name of a defaults section`);
    else p.push({ op: 'from', line: lineNo, kind, name, from });
    argIndex += 2;
  }
  if (kind !== 'global' && kind !== 'namespace_list' && w.length > argIndex) {
    p.error(lineNo, `unexpected argument '${w[argIndex]}' after ${kind} name`);
  }
  p.section = { kind, name, named: name !== '' };

  if (name === '') return;
  if (kind === 'frontend' || kind === 'backend' || kind === 'listen') {
    p.push({ op: 'proxy', line: lineNo, kind, name });
  } else if (kind === 'defaults') {
    p.push({ op: 'defaults', name });
  } else {
    p.push({ op: 'section', line: lineNo, kind, name });
  }
}

export function otherSectionLine(p: ParseContext, section: Section, w: readonly string[], lineNo: number, line: string): void {
  const keyword = w[0] as string;
  const allowed = OTHER_SECTION_KEYWORDS.get(section.kind);
  if (allowed === undefined || !allowed.has(keyword)) {
    p.unknownKeyword(keyword, lineNo, line);
    return;
  }
  if (section.kind === 'http-errors' && keyword === 'errorfile') {
    errorfile(p, w, lineNo);
  } else if (keyword === 'server' && (section.kind === 'peers' || section.kind === 'ring')) {
    serverLine(p, w, lineNo, section.kind === 'peers');
  } else if (keyword === 'nameserver' || keyword === 'mailer' || keyword === 'peer') {
    if (w[1] === undefined || (w[2] === undefined && keyword !== 'peer')) {
      p.error(lineNo, `'${keyword}' expects <name> and <address>[:<port>] as arguments`);
    }
  } else if (section.kind === 'cache' && (keyword === 'total-max-size' || keyword === 'max-object-size' || keyword === 'max-age')) {
    if (!isIntegerArg(w[1])) p.error(lineNo, `'${keyword}' expects an integer argument (got '${w[1] ?? ''}')`);
  } else if (section.kind === 'ring' && keyword === 'size') {
    if (!isSizeArg(w[1])) p.error(lineNo, `'size' expects a size (got '${w[1] ?? ''}')`);
  }
}
