// The loop-guard token of an output directory: a random word the HAProxy it configures adds to
// every request it passes on (x-haptic-loop) and refuses (508) on a request already carrying it,
// so a request that a DNS-resolved backend sends back to this ingress stops at its second pass.
// Made when `render` or `run` starts and kept in <out>/.haptic-instance-token (0600, atomic, never
// through a symlink), so the config does not change at every start; it reaches templates as the
// `loopGuardToken` value (templates/default.yaml).
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readKeptFile, writeKeptFile } from './kept-file.js';

export const INSTANCE_TOKEN_FILE = '.haptic-instance-token';

/** 128 random bits in hex: not guessable, and a word the template may write bare. */
const TOKEN = /^[0-9a-f]{32}$/;

/** The kept token of `outDir`, or a new one, written for the next start. Creates `outDir` if needed. */
export async function instanceTokenFor(outDir: string): Promise<string> {
  const file = join(outDir, INSTANCE_TOKEN_FILE);
  await mkdir(outDir, { recursive: true, mode: 0o755 });
  const kept = (await readKeptFile(file, 1024))?.trim();
  if (kept !== undefined && TOKEN.test(kept)) return kept;
  const token = randomBytes(16).toString('hex');
  await writeKeptFile(file, `${token}\n`);
  return token;
}
