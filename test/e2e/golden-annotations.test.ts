// Golden files for the annotations: the manifests of test/e2e/golden/annotations/manifests/ (every
// supported annotation, on Ingresses and Services, plus what is refused) rendered with the default
// template set and default values must match test/e2e/golden/annotations/expected/ byte for byte,
// the warnings and rejections included (report.txt). After an intended change, regenerate with
// `UPDATE_GOLDEN=1 npx vitest run test/e2e/golden-annotations.test.ts` and review the diff.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import { loadManifests } from '../../src/main/sources/manifest/manifest-loader.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import { ANNOTATIONS } from '../../src/worker/routing/annotations/registry.js';

const HERE = join(dirname(fileURLToPath(import.meta.url)), 'golden', 'annotations');
const MANIFESTS = join(HERE, 'manifests');
const EXPECTED = join(HERE, 'expected');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

async function render(): Promise<{ result: PipelineResult; loadErrors: string[] }> {
  const set = await loadTemplateSet();
  const stores = new StoreProvider(set.stores);
  const loaded = await loadManifests(MANIFESTS, set.stores);
  for (const { store, object } of loaded.objects) stores.store(store).upsert(object);
  const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
  return { result, loadErrors: loaded.errors };
}

/** Every output file by its path relative to the output directory, plus report.txt (warnings, then rejections). */
function outputFiles(result: PipelineResult): Map<string, string> {
  const files = new Map<string, string>([['haproxy.cfg', result.haproxyConfig]]);
  const dirs = { maps: result.auxiliaryFiles.maps, files: result.auxiliaryFiles.files, certs: result.auxiliaryFiles.certificates };
  for (const [dir, entries] of Object.entries(dirs)) {
    for (const name of Object.keys(entries).sort()) files.set(`${dir}/${name}`, entries[name] as string);
  }
  const rejections = result.rejections.map((r) => `rejected ${r.kind} ${r.namespace}/${r.name} (${r.scope}): ${r.reason}`);
  files.set('report.txt', [...result.warnings.map((w) => `warning ${w}`), ...rejections].map((line) => `${line}\n`).join(''));
  return files;
}

function expectedFiles(dir = EXPECTED, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...expectedFiles(join(dir, entry.name), `${prefix}${entry.name}/`));
    else if (entry.isFile()) out.push(`${prefix}${entry.name}`);
  }
  return out.sort();
}

const { result, loadErrors } = await render();
const rendered = outputFiles(result);

if (UPDATE) {
  rmSync(EXPECTED, { recursive: true, force: true });
  for (const [path, text] of rendered) {
    mkdirSync(dirname(join(EXPECTED, path)), { recursive: true });
    writeFileSync(join(EXPECTED, path), text);
  }
  console.warn(`UPDATE_GOLDEN=1: wrote ${rendered.size} golden files to ${EXPECTED}`);
}

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
    const again = await render();
    expect(again.result.checksum).toBe(result.checksum);
    expect(outputFiles(again.result)).toEqual(rendered);
  });
});
