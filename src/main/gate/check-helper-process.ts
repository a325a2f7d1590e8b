// The render gate's helper process, forked once by CheckHelper: it runs `haproxy -c` so that the
// controller's big process never forks HAProxy (a fork costs time in proportion to the parent's
// memory). It rebuilds each render from the changes the gate sends, and runs the check only when
// the render's structure changed since the previous one or the previous one did not pass
// (structure-change.ts); otherwise the verdict is the previous one's. Checks run one at a time, in
// the order they came. It exits when the controller goes away (its IPC channel closes).
import { haproxyRenderChecker } from './render-checker.js';
import { structuralChange } from './structure-change.js';
import type { CheckReply, CheckRequest, HelperRequest } from './check-helper-protocol.js';
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
  const reason = 'full' in message.config ? 'first check' : structuralChange({
    before,
    window: message.config.window,
    changedFiles: Object.keys(message.files),
    removedFiles: message.removed,
    hadFile: (id) => had.has(id),
    ...(message.runtimeFiles === undefined ? {} : { runtimeFiles: message.runtimeFiles }),
  });
  const controller = new AbortController();
  running.set(message.id, controller);
  queue = queue.then(() => run(message, change, reason, controller.signal)).finally(() => running.delete(message.id));
});
process.on('disconnect', () => process.exit(0));

/** Applies the changes to the state; returns the render as it now stands. */
function apply(message: CheckRequest): { config: string; aux: AuxiliaryFiles } {
  if ('full' in message.config) {
    config = message.config.full;
    files.clear();
  } else {
    const { start, endBefore, text } = message.config.window;
    config = config.slice(0, start) + text + config.slice(endBefore);
  }
  for (const id of message.removed) files.delete(id);
  for (const [id, change] of Object.entries(message.files)) {
    if ('full' in change) {
      files.set(id, change.full);
    } else {
      const before = files.get(id) ?? '';
      files.set(id, before.slice(0, change.window.start) + change.window.text + before.slice(change.window.endBefore));
    }
  }
  const aux: Record<string, Record<string, string>> = { maps: {}, files: {}, certificates: {} };
  for (const [id, text] of files) {
    const cut = id.indexOf('/');
    const kind = aux[id.slice(0, cut)];
    if (kind !== undefined) kind[id.slice(cut + 1)] = text;
  }
  return { config, aux: aux as unknown as AuxiliaryFiles };
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
