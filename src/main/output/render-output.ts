// Writes a render to disk in the layout its config refers to: haproxy.cfg plus maps/, files/
// and certs/ directories. Stale files from an earlier render are removed.
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuxiliaryFiles } from '../../worker/protocol.js';

export interface OutputDirs {
  readonly configFile: string;
  readonly mapsDir: string;
  readonly filesDir: string;
  readonly certsDir: string;
}

export function outputDirs(outDir: string): OutputDirs {
  return {
    configFile: join(outDir, 'haproxy.cfg'),
    mapsDir: join(outDir, 'maps'),
    filesDir: join(outDir, 'files'),
    certsDir: join(outDir, 'certs'),
  };
}

export async function writeRenderOutput(dirs: OutputDirs, haproxyConfig: string, aux: AuxiliaryFiles): Promise<void> {
  await Promise.all([
    syncDir(dirs.mapsDir, aux.maps, 0o644),
    syncDir(dirs.filesDir, aux.files, 0o644),
    syncDir(dirs.certsDir, aux.certificates, 0o600),
  ]);
  await writeFile(dirs.configFile, haproxyConfig, { mode: 0o644 });
}

async function syncDir(dir: string, files: Readonly<Record<string, string>>, mode: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  const existing = await readdir(dir);
  await Promise.all(existing.filter((name) => !(name in files)).map((name) => rm(join(dir, name), { force: true })));
  await Promise.all(Object.entries(files).map(([name, text]) => writeFile(join(dir, name), text, { mode })));
}
