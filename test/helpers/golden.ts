// Golden-file tests: render a manifest directory with the default template set (default values),
// list every output file by its path in an output directory, read and rewrite a golden directory
// (UPDATE_GOLDEN=1), so each golden test states only what it renders and what it checks.
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { CheckedPipelineResult } from '../../src/main/pipeline/pipeline.js';
import { loadManifests } from '../../src/main/sources/manifest/manifest-loader.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';

export const UPDATE_GOLDEN = process.env.UPDATE_GOLDEN === '1';

/** The manifests of `dir` rendered once, with what the loader could not read. */
export async function renderManifestDir(dir: string): Promise<{ result: CheckedPipelineResult; loadErrors: string[] }> {
  const set = await loadTemplateSet();
  const stores = new StoreProvider(set.stores);
  const loaded = await loadManifests(dir, set.stores);
  for (const { store, object } of loaded.objects) stores.store(store).upsert(object);
  const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
  return { result, loadErrors: loaded.errors };
}

/** Every output file of a render, by its path relative to the output directory. */
export function outputFiles(result: CheckedPipelineResult): Map<string, string> {
  const files = new Map<string, string>([['haproxy.cfg', result.haproxyConfig]]);
  const dirs = { maps: result.auxiliaryFiles.maps, files: result.auxiliaryFiles.files, certs: result.auxiliaryFiles.certificates };
  for (const [dir, entries] of Object.entries(dirs)) {
    for (const name of Object.keys(entries).sort()) files.set(`${dir}/${name}`, entries[name] as string);
  }
  return files;
}

/** The files of a golden directory, by relative path, sorted. */
export function goldenFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...goldenFiles(join(dir, entry.name), `${prefix}${entry.name}/`));
    else if (entry.isFile()) out.push(`${prefix}${entry.name}`);
  }
  return out.sort();
}

/** Replaces the golden directory with `files` (UPDATE_GOLDEN=1). */
export function writeGolden(dir: string, files: ReadonlyMap<string, string>): void {
  rmSync(dir, { recursive: true, force: true });
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  console.warn(`UPDATE_GOLDEN=1: wrote ${files.size} golden files to ${dir}`);
}
