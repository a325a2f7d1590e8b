// Golden files for the annotations: the manifests of test/e2e/golden/annotations/manifests/ (every
// supported annotation, on Ingresses and Services, plus what is refused) rendered with the default
// template set and default values must match test/e2e/golden/annotations/expected/ byte for byte,
// the warnings and rejections included (report.txt). After an intended change, regenerate with
// `UPDATE_GOLDEN=1 npx vitest run test/e2e/golden-annotations.test.ts` and review the diff.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CheckedPipelineResult } from '../../src/main/pipeline/pipeline.js';
import { ANNOTATIONS } from '../../src/worker/routing/annotations/registry.js';
import { goldenFiles, outputFiles as renderedFiles, renderManifestDir, UPDATE_GOLDEN as UPDATE, writeGolden } from '../helpers/golden.js';

const HERE = join(dirname(fileURLToPath(import.meta.url)), 'golden', 'annotations');
const MANIFESTS = join(HERE, 'manifests');
const EXPECTED = join(HERE, 'expected');

/** Every output file by its path relative to the output directory, plus report.txt (warnings, then rejections). */
function outputFiles(result: CheckedPipelineResult): Map<string, string> {
  const files = renderedFiles(result);
  const rejections = result.rejections.map((r) => `rejected ${r.kind} ${r.namespace}/${r.name} (${r.scope}): ${r.reason}`);
  files.set('report.txt', [...result.warnings.map((w) => `warning ${w}`), ...rejections].map((line) => `${line}\n`).join(''));
  return files;
}

const expectedFiles = (): string[] => goldenFiles(EXPECTED);

const { result, loadErrors } = await renderManifestDir(MANIFESTS);
const rendered = outputFiles(result);

if (UPDATE) writeGolden(EXPECTED, rendered);

describe('golden render of the annotation manifests', () => {
  it('loads every manifest', () => {
    expect(loadErrors).toEqual([]);
  });

  it('uses every supported annotation somewhere in the manifests', () => {
    const text = readdirSync(MANIFESTS)
      .map((name) => readFileSync(join(MANIFESTS, name), 'utf8'))
      .join('\n');
    const missing = ANNOTATIONS.filter((spec) => ![spec.name, ...(spec.aliases ?? [])].some((name) => new RegExp(`(haproxy\\.org|haproxy\\.com|ingress\\.kubernetes\\.io)/${name}:`).test(text)));
    expect(missing.map((spec) => spec.name)).toEqual([]);
  });

  it('produces exactly the committed set of output files', () => {
    expect([...rendered.keys()].sort()).toEqual(expectedFiles());
  });

  it.each([...rendered.keys()])('renders %s byte for byte as committed', (path) => {
    const goldenPath = join(EXPECTED, path);
    if (!existsSync(goldenPath)) expect.fail(`no golden file ${goldenPath}; run UPDATE_GOLDEN=1 npx vitest run test/e2e/golden-annotations.test.ts and review the result`);
    const actual = Buffer.from(rendered.get(path) as string, 'utf8');
    const golden = readFileSync(goldenPath);
    if (!actual.equals(golden)) expect(actual.toString('utf8')).toBe(golden.toString('utf8'));
    expect(actual.equals(golden)).toBe(true);
  });

  it('renders the same bytes on every run', async () => {
    const again = await renderManifestDir(MANIFESTS);
    expect(again.result.checksum).toBe(result.checksum);
    expect(outputFiles(again.result)).toEqual(rendered);
  });
});
