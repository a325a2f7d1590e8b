// The render gate's default checker: `haproxy -c` in a child process, on a private copy of the
// render (mkdtemp, mode 0700) whose config and files have the mapsDir/filesDir/certsDir prefixes
// rewritten to the copy's. Rewriting, rather than rendering again with other paths, checks the very
// text that will be deployed, costs one linear pass instead of a render, and needs nothing of the
// template set; the live output directory is never touched. Messages name the real paths again.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuxiliaryFiles, OutputPaths } from '../../worker/protocol.js';
import { haproxyBinary, type HaproxyVerdict } from '../haproxy/haproxy-check.js';

export type { OutputPaths } from '../../worker/protocol.js';

export type { HaproxyVerdict } from '../haproxy/haproxy-check.js';

/** What a checker reads of a render. */
export interface CheckableRender {
  readonly renderId: string;
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
}

/**
 * Judges a render. Resolves `{ok}`, `{refused}` (HAProxy rejected it; the message is its output),
 * or neither (the check could not run). Should stop promptly when `signal` aborts.
 */
export type RenderChecker = (render: CheckableRender, signal: AbortSignal) => Promise<HaproxyVerdict>;


export interface HaproxyRenderCheckerOptions {
  /** The directories to rewrite (`outputPathsIn(out)`). */
  readonly directories: OutputPaths;
  /** @default haproxyBinary() ($HAPROXY_BIN or `haproxy`) */
  readonly binary?: string;
  /** Where the private copies go. @default os.tmpdir() */
  readonly tempRoot?: string;
}

/** A plain file name: no directory part, nothing hidden (the output directory's rule). */
const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;

/** `haproxy -c` on a private copy of each render (see the header). */
export function haproxyRenderChecker(options: HaproxyRenderCheckerOptions): RenderChecker {
  const binary = options.binary ?? haproxyBinary();
  const tempRoot = options.tempRoot ?? tmpdir();
  return async (render, signal) => {
    signal.throwIfAborted();
    const root = await mkdtemp(join(tempRoot, 'haptic-gate-'));
    try {
      const copy: OutputPaths = { mapsDir: join(root, 'maps'), filesDir: join(root, 'files'), certsDir: join(root, 'certs') };
      const toCopy = prefixRewriter(options.directories, copy);
      const aux = render.auxiliaryFiles;
      await writeAll(copy.mapsDir, aux.maps, (text) => text, 0o600);
      await writeAll(copy.filesDir, aux.files, toCopy, 0o600);
      await writeAll(copy.certsDir, aux.certificates, (text) => text, 0o600);
      const configFile = join(root, 'haproxy.cfg');
      await writeFile(configFile, toCopy(render.haproxyConfig), { mode: 0o600 });
      const verdict = await runCheck(binary, configFile, signal);
      const toReal = prefixRewriter(copy, options.directories);
      return { ...verdict, message: toReal(verdict.message).replaceAll(configFile, 'haproxy.cfg') };
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  };
}

/**
 * Replaces each directory of `from` by the same one of `to` wherever it starts a path: not inside
 * a longer path, and followed by `/` or the end of the token. One regular expression, one pass.
 */
export function prefixRewriter(from: OutputPaths, to: OutputPaths): (text: string) => string {
  const pairs = new Map<string, string>();
  for (const key of ['mapsDir', 'filesDir', 'certsDir'] as const) {
    const source = stripSlash(from[key]);
    if (source !== '') pairs.set(source, stripSlash(to[key]));
  }
  if (pairs.size === 0) return (text) => text;
  // Longest first, so a directory nested in another is matched whole.
  const alternatives = [...pairs.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const pattern = new RegExp(`(?<![\\w./-])(?:${alternatives.join('|')})(?=[/\\s,)"'\\]]|$)`, 'g');
  return (text) => text.replace(pattern, (match) => pairs.get(match) ?? match);
}

async function writeAll(dir: string, files: Readonly<Record<string, string>>, transform: (text: string) => string, mode: number): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [name, text] of Object.entries(files)) {
    if (!SAFE_NAME.test(name)) throw new Error(`refusing to write ${JSON.stringify(name)}: not a plain file name`);
    await writeFile(join(dir, name), transform(text), { mode });
  }
}

function runCheck(binary: string, configFile: string, signal: AbortSignal): Promise<HaproxyVerdict> {
  return new Promise((resolve) => {
    execFile(binary, ['-c', '-f', configFile], { signal, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (error === null) {
        resolve({ ok: true, refused: false, message: output || 'Configuration file is valid' });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      if (typeof code === 'string' || error.killed || error.name === 'AbortError') {
        // ENOENT, EACCES, killed by the signal: HAProxy did not judge the config.
        resolve({ ok: false, refused: false, message: `haproxy could not run: ${error.message}` });
        return;
      }
      resolve({ ok: false, refused: true, message: output || error.message });
    });
  });
}

function stripSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
