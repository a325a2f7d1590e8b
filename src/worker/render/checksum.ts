// The checksum of a render: SHA-256 over the config's digest and each auxiliary file's, kept
// between renders per block (config-digest.ts) so that a render that changed a few sections or
// lines hashes only those, and identical to a checksum computed afresh from the same texts.
import { createHash } from 'node:crypto';
import type { AuxiliaryFiles } from '../protocol.js';
import { SERVER_SLOTS_FILE } from '../routing/server-slots.js';
import type { ChangedWindows } from './changed-windows.js';
import { ConfigDigest } from './config-digest.js';
import { sha256 } from './sha256.js';

/**
 * Files digested per line (config-digest.ts with "\n" blocks, keyed by the text before the first
 * space) instead of whole: the endpoint lane edits the server-slots line of a backend in place,
 * and a changed Ingress changes a line or two of a map of thousands, so the file's digest then
 * costs the lines it changed. Fixed by name (server-slots.txt and every map), so that the digest
 * of a file depends on its name and text alone.
 */
export const SLOTS_ID = `files/${SERVER_SLOTS_FILE}`;

function lineDigested(kind: keyof AuxiliaryFiles, id: string): boolean {
  return kind === 'maps' || id === SLOTS_ID;
}

/** What a checksum may keep between renders: see `checksum`. */
export interface ChecksumState {
  /** The last text and digest per file. */
  readonly digests: Map<string, { text: string; digest: string }>;
  /** The config's blocks. */
  readonly configDigest: ConfigDigest;
  /** The lines of each line-digested file. */
  readonly lineDigests: Map<string, ConfigDigest>;
  /** Where the render's files changed, when its other readers found it already (changed-windows.ts). */
  readonly windows?: ChangedWindows;
}

/**
 * SHA-256 over the config's digest (combined from its blocks', config-digest.ts) and each
 * auxiliary file's kind, name and digest, in a fixed order (a line-digested file's digest is
 * combined from its lines'). Per-file digests let an unchanged file (the same text as in the
 * previous render) skip hashing: `kept` remembers the last text and digest per file, and the
 * blocks of the config and of the line-digested files. Without `kept`, everything is hashed
 * afresh, to the same result.
 */
export function checksum(config: string, aux: AuxiliaryFiles, kept?: ChecksumState, window?: { readonly prefix: number; readonly suffix: number }): string {
  const hash = createHash('sha256');
  hash.update((kept?.configDigest ?? new ConfigDigest()).digest(config, window));
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    const files = aux[kind];
    for (const name of Object.keys(files).sort()) {
      const id = `${kind}/${name}`;
      hash.update(`\0${id}\0`);
      const text = files[name] as string;
      hash.update(lineDigested(kind, id) ? lineDigestIn(kept, id, text) : fileDigest(id, text, kept?.digests));
    }
  }
  if (kept !== undefined) {
    // Bounded by the files of this render.
    const live = new Set(['config', ...(['maps', 'files', 'certificates'] as const).flatMap((kind) => Object.keys(aux[kind]).map((name) => `${kind}/${name}`))]);
    for (const id of kept.digests.keys()) if (!live.has(id)) kept.digests.delete(id);
    for (const id of kept.lineDigests.keys()) if (!live.has(id)) kept.lineDigests.delete(id);
  }
  return hash.digest('hex');
}

function lineDigest(): ConfigDigest {
  return new ConfigDigest('\n', ' ');
}

/** The digest of a line-digested file, from its kept lines and, when known, where it changed. */
function lineDigestIn(kept: ChecksumState | undefined, id: string, text: string): string {
  if (kept === undefined) return lineDigest().digest(text);
  const digest = lineDigestOf(kept.lineDigests, id);
  const previous = digest.text;
  if (previous === undefined || kept.windows === undefined) return digest.digest(text);
  const { windows } = kept;
  const cut = windows.lines(id, previous, text);
  return digest.digest(text, cut === undefined ? undefined : { prefix: cut.start, suffix: previous.length - cut.oldEnd }, windows.views(id, previous, text));
}

export function lineDigestOf(kept: Map<string, ConfigDigest>, id: string): ConfigDigest {
  let digest = kept.get(id);
  if (digest === undefined) {
    digest = lineDigest();
    kept.set(id, digest);
  }
  return digest;
}

function fileDigest(id: string, text: string, digests: Map<string, { text: string; digest: string }> | undefined): string {
  const known = digests?.get(id);
  if (known !== undefined && known.text === text) return known.digest;
  const digest = sha256(text, 'hex');
  digests?.set(id, { text, digest });
  return digest;
}
