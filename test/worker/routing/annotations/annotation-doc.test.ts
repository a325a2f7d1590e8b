// The README's annotation table is generated from the annotation registry, so the table users
// read is the table the parser uses. `UPDATE_DOCS=1 npx vitest run <this file>` rewrites it.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_PREFIXES, ANNOTATIONS, REFUSED_ANNOTATIONS } from '../../../../src/worker/routing/annotations/registry.js';
import { REPO_ROOT } from '../../../helpers/cli-process.js';

const README = join(REPO_ROOT, 'README.md');
const START = '<!-- annotations: generated from the registry by test/worker/routing/annotations/annotation-doc.test.ts -->';
const END = '<!-- annotations: end -->';

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function annotationDoc(): string {
  const lines = [
    START,
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
    'Refused with a warning, the object served without them:',
    '',
    '| annotation | why |',
    '|---|---|',
    ...REFUSED_ANNOTATIONS.map((r) => `| \`${r.name}\` | ${cell(r.reason)} |`),
    END,
  ];
  return lines.join('\n');
}

describe("the README's annotation table", () => {
  it('lists every annotation of the registry with its values, default and effect, and every refused one', async () => {
    const expected = annotationDoc();
    const readme = await readFile(README, 'utf8');
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    expect(start, 'the table markers in README.md').toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    if (process.env.UPDATE_DOCS === '1') await writeFile(README, readme.slice(0, start) + expected + readme.slice(end + END.length));
    const actual = (await readFile(README, 'utf8')).slice(start, start + expected.length);
    expect(actual).toBe(expected);
    for (const spec of ANNOTATIONS) expect(actual).toContain(`\`${spec.name}\``);
  });
});
