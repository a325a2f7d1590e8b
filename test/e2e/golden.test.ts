// Golden files: the example cluster rendered with the default template set (default values, so
// the config points at /etc/haproxy/{maps,files,certs}) must match test/e2e/golden/examples/ byte for
// byte. After an intended change, regenerate with `UPDATE_GOLDEN=1 npx vitest run test/e2e/golden.test.ts`
// and review the diff.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import { loadManifests } from '../../src/main/sources/manifest/manifest-loader.js';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), 'golden', 'examples');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

async function renderExamples(): Promise<{ result: PipelineResult; loadErrors: string[] }> {
  const set = await loadTemplateSet();
  const stores = new StoreProvider(set.stores);
  const loaded = await loadManifests(EXAMPLES_DIR, set.stores);
  for (const { store, object } of loaded.objects) stores.store(store).upsert(object);
  const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
  return { result, loadErrors: loaded.errors };
}

/** Every output file of a render, by its path relative to the output directory. */
function outputFiles(result: PipelineResult): Map<string, string> {
  const files = new Map<string, string>([['haproxy.cfg', result.haproxyConfig]]);
  const dirs = { maps: result.auxiliaryFiles.maps, files: result.auxiliaryFiles.files, certs: result.auxiliaryFiles.certificates };
  for (const [dir, entries] of Object.entries(dirs)) {
    for (const name of Object.keys(entries).sort()) files.set(`${dir}/${name}`, entries[name] as string);
  }
  return files;
}

function goldenFiles(dir = GOLDEN_DIR, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...goldenFiles(join(dir, entry.name), `${prefix}${entry.name}/`));
    else if (entry.isFile()) out.push(`${prefix}${entry.name}`);
  }
  return out.sort();
}

const { result, loadErrors } = await renderExamples();
const rendered = outputFiles(result);

if (UPDATE) {
  rmSync(GOLDEN_DIR, { recursive: true, force: true });
  for (const [path, text] of rendered) {
    mkdirSync(dirname(join(GOLDEN_DIR, path)), { recursive: true });
    writeFileSync(join(GOLDEN_DIR, path), text);
  }
  console.warn(`UPDATE_GOLDEN=1: wrote ${rendered.size} golden files to ${GOLDEN_DIR}`);
}

describe('golden render of the example cluster', () => {
  it('loads and renders the example cluster without errors or warnings', () => {
    expect(loadErrors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('produces exactly the committed set of output files', () => {
    expect([...rendered.keys()].sort()).toEqual(goldenFiles());
  });

  it.each([...rendered.keys()])('renders %s byte for byte as committed', (path) => {
    const goldenPath = join(GOLDEN_DIR, path);
    if (!existsSync(goldenPath)) {
      expect.fail(`no golden file ${goldenPath}; run UPDATE_GOLDEN=1 npx vitest run test/e2e/golden.test.ts and review the result`);
    }
    const actual = Buffer.from(rendered.get(path) as string, 'utf8');
    const golden = readFileSync(goldenPath);
    if (!actual.equals(golden)) {
      // A readable diff first; the byte check below also catches differences text decoding hides.
      expect(actual.toString('utf8')).toBe(golden.toString('utf8'));
    }
    expect(actual.equals(golden)).toBe(true);
  });

  it('renders the same bytes on every run', async () => {
    const again = await renderExamples();
    expect(again.result.checksum).toBe(result.checksum);
    expect(outputFiles(again.result)).toEqual(rendered);
  });

  it('points the config at the default output directories', () => {
    expect(result.haproxyConfig).toContain('map(/etc/haproxy/maps/host-exact.map)');
    expect(result.haproxyConfig).toContain('crt-list /etc/haproxy/files/crt-list.txt');
    expect(result.auxiliaryFiles.files['crt-list.txt']).toMatch(/^\/etc\/haproxy\/certs\/shop_shop-tls\.pem /);
  });
});
