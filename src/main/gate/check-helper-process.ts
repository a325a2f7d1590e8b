// The render gate's helper process, forked once by CheckHelper: it runs `haproxy -c` so that the
// controller's big process never forks HAProxy (a fork costs time in proportion to the parent's
// memory). It rebuilds each render from the changes the gate sends, and runs the check only when
// the render's structure changed since the previous one or the previous one did not pass
// (structure-change.ts); otherwise the verdict is the previous one's. Checks run one at a time, in
// the order they came. It exits when the controller goes away (its IPC channel closes).
import { haproxyRenderChecker } from './render-checker.js';
import { structuralChange } from './structure-change.js';
import type { CheckReply, CheckRequest, HelperRequest, TextChange } from './check-helper-protocol.js';
import type { ConfigWindow } from './structure-change.js';
import type { AuxiliaryFiles } from '../../worker/protocol.js';

let config = '';
const files = new Map<string, string>();
/** Whether the latest render checked (or inherited a verdict) passed. */
let passed = false;
const running = new Map<number, AbortController>();
let queue: Promise<void> = Promise.resolve();

process.on('message', (message: HelperRequest) => {
  if (message.type === 'abort') {
    running.get(message.id)?.abort(new Error('aborted'));
    return;
  }
  const before = config;
  const had = new Set(files.keys());
  const change = apply(message);
  const windows = 'full' in message.config ? undefined : 'window' in message.config ? [message.config.window] : message.config.windows;
  const fileChange = {
    changedFiles: Object.keys(message.files),
    removedFiles: message.removed,
    hadFile: (id: string) => had.has(id),
    ...(message.runtimeFiles === undefined ? {} : { runtimeFiles: message.runtimeFiles }),
  };
  let reason = windows === undefined ? 'first check' : windows.length === 0 ? structuralChange({ before, window: { start: 0, endBefore: 0, text: '' }, ...fileChange }) : undefined;
  // Each window on its own; the files count with the first.
  for (let i = 0; windows !== undefined && reason === undefined && i < windows.length; i++) {
    reason = structuralChange({ before, window: windows[i] as ConfigWindow, ...(i === 0 ? fileChange : { changedFiles: [], removedFiles: [], hadFile: fileChange.hadFile }) });
  }
  const controller = new AbortController();
  running.set(message.id, controller);
  queue = queue.then(() => run(message, change, reason, controller.signal)).finally(() => running.delete(message.id));
});
process.on('disconnect', () => process.exit(0));

/** Applies the changes to the state; returns the render as it now stands. */
function apply(message: CheckRequest): { config: string; aux: AuxiliaryFiles } {
  if ('full' in message.config) files.clear();
  config = changed(config, message.config);
  for (const id of message.removed) files.delete(id);
  for (const [id, change] of Object.entries(message.files)) files.set(id, changed(files.get(id) ?? '', change));
  const aux: Record<string, Record<string, string>> = { maps: {}, files: {}, certificates: {} };
  for (const [id, text] of files) {
    const cut = id.indexOf('/');
    const kind = aux[id.slice(0, cut)];
    if (kind !== undefined) kind[id.slice(cut + 1)] = text;
  }
  return { config, aux: aux as unknown as AuxiliaryFiles };
}

/** `before` with `change` applied. */
function changed(before: string, change: TextChange): string {
  if ('full' in change) return change.full;
  const windows = 'window' in change ? [change.window] : change.windows;
  let text = '';
  let at = 0;
  for (const window of windows) {
    text += before.slice(at, window.start) + window.text;
    at = window.endBefore;
  }
  return text + before.slice(at);
}

async function run(message: CheckRequest, render: { config: string; aux: AuxiliaryFiles }, reason: string | undefined, signal: AbortSignal): Promise<void> {
  let reply: CheckReply;
  if (reason === undefined && passed) {
    reply = { id: message.id, skipped: true, verdict: { ok: true, refused: false, message: 'Configuration file is valid (only runtime state changed since a render haproxy -c passed)' } };
  } else {
    try {
      const check = haproxyRenderChecker({ directories: message.directories, ...(message.binary === undefined ? {} : { binary: message.binary }) });
      const verdict = await check({ renderId: String(message.id), haproxyConfig: render.config, auxiliaryFiles: render.aux }, signal);
      reply = { id: message.id, skipped: false, verdict };
    } catch (error) {
      reply = { id: message.id, skipped: false, verdict: { ok: false, refused: false, message: `the check could not run: ${error instanceof Error ? error.message : String(error)}` } };
    }
    passed = reply.verdict.ok && !signal.aborted;
  }
  process.send?.(reply);
}
