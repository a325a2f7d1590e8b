// Golden files: the example cluster rendered with the default template set (default values, so
// the config points at /etc/haproxy/{maps,files,certs}) must match test/e2e/golden/examples/ byte for
// byte. After an intended change, regenerate with `UPDATE_GOLDEN=1 npx vitest run test/e2e/golden.test.ts`
// and review the diff.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { goldenFiles as goldenFilesIn, outputFiles, renderManifestDir, UPDATE_GOLDEN as UPDATE, writeGolden } from '../helpers/golden.js';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), 'golden', 'examples');
const goldenFiles = (): string[] => goldenFilesIn(GOLDEN_DIR);

const { result, loadErrors } = await renderManifestDir(EXAMPLES_DIR);
const rendered = outputFiles(result);

if (UPDATE) writeGolden(GOLDEN_DIR, rendered);

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
    const again = await renderManifestDir(EXAMPLES_DIR);
    expect(again.result.checksum).toBe(result.checksum);
    expect(outputFiles(again.result)).toEqual(rendered);
  });

  it('points the config at the default output directories', () => {
    expect(result.haproxyConfig).toContain('map(/etc/haproxy/maps/host-exact.map)');
    expect(result.haproxyConfig).toContain('crt-list /etc/haproxy/files/crt-list.txt');
    expect(result.auxiliaryFiles.files['crt-list.txt']).toMatch(/^\/etc\/haproxy\/certs\/shop_shop-tls\.pem /);
  });
});
