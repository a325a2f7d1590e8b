// Preflight: what the controller checks before it starts anything, so that a setting that can
// never work stops `run` at once with one line saying what is wrong, instead of a controller that
// serves /healthz while it watches nothing, writes nowhere or supervises no HAProxy.
// Checked: the manifest directory exists and is a readable directory; the output directory can be
// created and written; with HAProxy, the binary runs.
import { constants } from 'node:fs';
import { access, mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StartupError } from '../core/errors.js';
import { haproxyBinary, haproxyVersion } from '../haproxy/haproxy-check.js';

export interface PreflightOptions {
  /** The manifest directory, when that is the source. */
  readonly manifests?: string;
  readonly out: string;
  /** Whether a local HAProxy will be started. */
  readonly haproxy: boolean;
  /** @default HAPROXY_BIN or `haproxy` */
  readonly haproxyBinary?: string;
}

/** Resolves when the controller can start; otherwise throws a StartupError naming what and where. */
export async function preflight(options: PreflightOptions): Promise<void> {
  if (options.manifests !== undefined) await checkManifestDirectory(options.manifests);
  await checkOutputDirectory(options.out);
  if (options.haproxy) await checkHaproxy(options.haproxyBinary ?? haproxyBinary());
}

async function checkManifestDirectory(dir: string): Promise<void> {
  const stats = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(error.code === 'ENOENT' ? `manifest directory ${dir} does not exist` : `cannot read the manifest directory ${dir}: ${reason(error)}`, { cause: error });
  });
  if (!stats.isDirectory()) throw new StartupError(`manifest directory ${dir} is not a directory`);
  await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`cannot read the manifest directory ${dir}: ${reason(error)}`, { cause: error });
  });
}

async function checkOutputDirectory(out: string): Promise<void> {
  // A probe file proves what access() cannot for root: that the filesystem takes a write.
  const probe = join(out, `.write-check-${process.pid}`);
  try {
    await mkdir(out, { recursive: true });
    await access(out, constants.W_OK);
    await writeFile(probe, '');
  } catch (error) {
    throw new StartupError(`cannot write the output directory ${out} (--out): ${reason(error as NodeJS.ErrnoException)}`, { cause: error });
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
}

async function checkHaproxy(binary: string): Promise<void> {
  if ((await haproxyVersion(binary)) !== null) return;
  throw new StartupError(`HAProxy is not installed or cannot run (${JSON.stringify(binary)}): --haproxy needs it; install it or set HAPROXY_BIN to its path`);
}

/** `ENOTDIR: not a directory` without the path and syscall Node appends. */
function reason(error: NodeJS.ErrnoException): string {
  return error.message.replace(/, \w+ '[^']*'$/, '');
}
