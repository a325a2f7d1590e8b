// Messages between the render gate and its helper process (check-helper.ts, check-helper-process.ts).
// A check carries only what changed since the previous check sent to the same process: the
// config's changed window and the changed files; the helper rebuilds the render from them.
import type { HaproxyVerdict } from '../haproxy/haproxy-check.js';
import type { OutputPaths } from '../../worker/protocol.js';
import type { ConfigWindow, FileId } from './structure-change.js';

export interface CheckRequest {
  readonly type: 'check';
  readonly id: number;
  /** The whole config (the first check of a process), or its changed window, or (from a patch) its changed windows. */
  readonly config: TextChange;
  /** Changed and new files by `<kind>/<name>`: a new file whole, a changed one as its changed window(s). */
  readonly files: Readonly<Record<FileId, TextChange>>;
  readonly removed: readonly FileId[];
  readonly directories: OutputPaths;
  readonly binary?: string;
  readonly runtimeFiles?: readonly string[];
}

/** A text whole, or the previous text with one window changed, or with several (sorted and apart, offsets into the previous text). */
export type TextChange = { readonly full: string } | { readonly window: ConfigWindow } | { readonly windows: readonly ConfigWindow[] };

export interface AbortRequest {
  readonly type: 'abort';
  readonly id: number;
}

export type HelperRequest = CheckRequest | AbortRequest;

export interface CheckReply {
  readonly id: number;
  readonly verdict: HaproxyVerdict;
  /** True when `haproxy -c` was not run: only runtime state changed since a render it passed. */
  readonly skipped: boolean;
}
