// docs/annotations.md is generated from the annotation registry, so the table users read is the
// table the parser uses. `UPDATE_DOCS=1 npx vitest run <this file>` rewrites it.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_PREFIXES, ANNOTATIONS, REFUSED_ANNOTATIONS } from '../../../../src/worker/routing/annotations/registry.js';
import { REPO_ROOT } from '../../../helpers/cli-process.js';

const DOC = join(REPO_ROOT, 'docs', 'annotations.md');

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function annotationDoc(): string {
  const lines = [
    '# Annotations of the default template set',
    '',
    '<!-- Generated from src/worker/routing/annotations/registry.ts by test/worker/routing/annotations/annotation-doc.test.ts (UPDATE_DOCS=1). -->',
    '',
    `Prefixes, in order of precedence when one name is set under several: ${ANNOTATION_PREFIXES.map((p) => `\`${p}\``).join(', ')}.`,
    'On an Ingress and its Service both, the Ingress wins. A bad value rejects the object with a warning naming the annotation;',
    'security annotations (access, auth) never fail open.',
    '',
    '| annotation | family | on | values | default | effect |',
    '|---|---|---|---|---|---|',
    ...ANNOTATIONS.map((spec) => {
      const names = [spec.name, ...(spec.aliases ?? [])].map((n) => `\`${n}\``).join(' / ');
      return `| ${names} | ${spec.family}${spec.security ? ' (security)' : ''} | ${spec.appliesTo.join(', ')} | ${cell(spec.values)} | ${cell(spec.default)} | ${cell(spec.effect)} |`;
    }),
    '',
    '## Refused',
    '',
    'These are refused with a warning; the object is served without them.',
    '',
    '| annotation | why |',
    '|---|---|',
    ...REFUSED_ANNOTATIONS.map((r) => `| \`${r.name}\` | ${cell(r.reason)} |`),
    '',
  ];
  return lines.join('\n');
}

describe('docs/annotations.md', () => {
  it('lists every annotation of the registry with its values, default and effect, and every refused one', async () => {
    const expected = annotationDoc();
    if (process.env.UPDATE_DOCS === '1') await writeFile(DOC, expected);
    const actual = await readFile(DOC, 'utf8');
    expect(actual).toBe(expected);
    for (const spec of ANNOTATIONS) expect(actual).toContain(`\`${spec.name}\``);
  });
});
