// The gate's helper process against the real haproxy -c: it gets each render as the changes since
// the previous one, and runs the check only when the render's structure changed or the previous
// render did not pass.
import { describe, expect, it } from 'vitest';
import { getPriority } from 'node:os';
import { CheckHelper, HELPER_NICENESS } from '../../../src/main/gate/check-helper.js';
import { haproxyVersion } from '../../../src/main/haproxy/haproxy-check.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';
import { endpointSlice, ingress, renderOk, rule, service } from '../../helpers/cluster.js';
import type { AuxiliaryFiles, KubeObject, TextEdit } from '../../../src/worker/protocol.js';

const DIRECTORIES = { mapsDir: '/srv/haptic/out/maps', filesDir: '/srv/haptic/out/files', certsDir: '/srv/haptic/out/certs' };
const realHaproxy = (await haproxyVersion()) !== null || process.env.CI === 'true';

type Render = { haproxyConfig: string; auxiliaryFiles: AuxiliaryFiles };

describe.runIf(realHaproxy)('CheckHelper (haproxy -c in a helper process)', () => {
  async function renders(): Promise<(addresses: string[], host?: string) => Render> {
    const set = await loadTemplateSet(undefined, { ...DIRECTORIES, serverSlots: 4 });
    return (addresses, host = 'shop.example.com') => {
      const objects: KubeObject[] = [ingress('shop', 'web', { rules: [rule(host, { path: '/', service: 'web' })] }), service('shop', 'web'), endpointSlice('shop', 'web', addresses)];
      const out = renderOk(set, objects);
      return { haproxyConfig: out.haproxyConfig, auxiliaryFiles: out.auxiliaryFiles };
    };
  }
  const signal = (): AbortSignal => AbortSignal.timeout(30_000);

  it('passes a render, then passes endpoint and map entry changes without running haproxy -c again', async () => {
    const render = await renders();
    const helper = new CheckHelper({ directories: DIRECTORIES });
    try {
      expect(await helper.check(render(['10.0.0.1']), signal())).toMatchObject({ ok: true, refused: false });
      expect(await helper.check(render(['10.0.0.2', '10.0.0.3']), signal())).toMatchObject({ ok: true });
      expect(await helper.check(render(['10.0.0.2', '10.0.0.3'], 'shop2.example.com'), signal())).toMatchObject({ ok: true });
      expect(helper.stats).toEqual({ checks: 3, skipped: 2, started: 1 });
    } finally {
      helper.close();
    }
  });

  it('checks a structural change, refuses a broken one, and checks again the runtime-only render that follows a refusal', async () => {
    const render = await renders();
    const helper = new CheckHelper({ directories: DIRECTORIES });
    try {
      const good = render(['10.0.0.1']);
      await helper.check(good, signal());
      const broken = { ...good, haproxyConfig: good.haproxyConfig.replace('balance roundrobin', 'balance no-such-algorithm') };
      expect(broken.haproxyConfig).not.toBe(good.haproxyConfig);
      expect(await helper.check(broken, signal())).toMatchObject({ ok: false, refused: true });
      const brokenMoved = { ...broken, haproxyConfig: broken.haproxyConfig.replace('10.0.0.1', '10.0.0.7') };
      expect(await helper.check(brokenMoved, signal())).toMatchObject({ ok: false, refused: true });
      expect(helper.stats.skipped).toBe(0);
    } finally {
      helper.close();
    }
  });

  it('takes a render given as a patch of the one sent before by its edits, and judges it as the whole text', async () => {
    const render = await renders();
    const helper = new CheckHelper({ directories: DIRECTORIES });
    /** `before` with each [from, to] replaced (first occurrences), as a render of its own and as edits of `before` (whole lines, as the endpoint lane's cover whole sections). */
    const patched = (renderId: string, before: Render & { renderId: string }, changes: [string, string][]) => {
      const text = before.haproxyConfig;
      const edits = changes
        .map(([from, to]) => {
          const start = text.lastIndexOf('\n', text.indexOf(from)) + 1;
          const end = text.indexOf('\n', start) + 1;
          return { at: start, remove: end - start, text: text.slice(start, end).replace(from, to) };
        })
        .sort((a, b) => a.at - b.at);
      let haproxyConfig = '';
      let at = 0;
      for (const edit of edits) {
        expect(edit.at).toBeGreaterThanOrEqual(at);
        haproxyConfig += before.haproxyConfig.slice(at, edit.at) + edit.text;
        at = edit.at + edit.remove;
      }
      haproxyConfig += before.haproxyConfig.slice(at);
      // server-slots.txt (runtime state) goes as a whole-text edit.
      const slots = before.auxiliaryFiles.files['server-slots.txt'];
      const movedSlots = slots === undefined ? undefined : changes.reduce((t, [from, to]) => t.replace(from, to), slots);
      const fileEdits: Record<string, TextEdit[]> = slots === undefined || movedSlots === slots ? {} : { 'files/server-slots.txt': [{ at: 0, remove: slots.length, text: movedSlots as string }] };
      const auxiliaryFiles = movedSlots === undefined ? before.auxiliaryFiles : { ...before.auxiliaryFiles, files: { ...before.auxiliaryFiles.files, 'server-slots.txt': movedSlots } };
      return { renderId, haproxyConfig, auxiliaryFiles, patch: { from: before.renderId, edits: { config: edits, ...fileEdits } } };
    };
    try {
      const first = { renderId: 'r1', ...render(['10.0.0.1']) };
      expect(await helper.check(first, signal())).toMatchObject({ ok: true });
      const moved = patched('r2', first, [['10.0.0.1', '10.0.0.9']]);
      expect(Object.keys(moved.patch.edits)).toEqual(['config', 'files/server-slots.txt']);
      expect(await helper.check(moved, signal())).toMatchObject({ ok: true });
      expect(helper.stats.skipped).toBe(1);
      // Two edits, one of them structural: checked, and the helper's text is the render's.
      const structural = patched('r3', moved, [['balance roundrobin', 'balance leastconn'], ['10.0.0.9', '10.0.0.10']]);
      expect(await helper.check(structural, signal())).toMatchObject({ ok: true });
      const broken = patched('r4', structural, [['balance leastconn', 'balance no-such-algorithm']]);
      expect(await helper.check(broken, signal())).toMatchObject({ ok: false, refused: true });
      expect(helper.stats).toEqual({ checks: 4, skipped: 1, started: 1 });
    } finally {
      helper.close();
    }
  });

  it('judges a patch with edits far apart by each edited window alone: runtime-only edits pass unchecked, a broken one is refused', async () => {
    const render = await renders();
    const helper = new CheckHelper({ directories: DIRECTORIES });
    /** Each line holding `from` (first occurrence) with `from` replaced, as whole-line edits of `before`. */
    const lineEdits = (before: string, changes: [string, string][]): TextEdit[] =>
      changes
        .map(([from, to]) => {
          const start = before.lastIndexOf('\n', before.indexOf(from)) + 1;
          const end = before.indexOf('\n', start) + 1;
          return { at: start, remove: end - start, text: before.slice(start, end).replace(from, to) };
        })
        .sort((a, b) => a.at - b.at);
    const apply = (before: string, edits: TextEdit[]): string => edits.reduceRight((text, e) => text.slice(0, e.at) + e.text + text.slice(e.at + e.remove), before);
    try {
      const first = { renderId: 'r1', ...render(['10.0.0.1', '10.0.0.2']) };
      expect(await helper.check(first, signal())).toMatchObject({ ok: true });
      // The first server line and the last line of the config: far apart, two windows.
      const lastLine = first.haproxyConfig.trimEnd().split('\n').at(-1) as string;
      const runtime = lineEdits(first.haproxyConfig, [['10.0.0.1', '10.0.0.7'], ['10.0.0.2', '10.0.0.8']]);
      const moved = { ...first, renderId: 'r2', haproxyConfig: apply(first.haproxyConfig, runtime), patch: { from: 'r1', edits: { config: runtime } } };
      expect(await helper.check(moved, signal())).toMatchObject({ ok: true });
      expect(helper.stats.skipped).toBe(1);
      const broken = lineEdits(moved.haproxyConfig, [['10.0.0.7', '10.0.0.5'], [lastLine, `${lastLine}\n  no-such-keyword 1`]]);
      const refused = { ...first, renderId: 'r3', haproxyConfig: apply(moved.haproxyConfig, broken), patch: { from: 'r2', edits: { config: broken } } };
      expect(broken).toHaveLength(2);
      expect(await helper.check(refused, signal())).toMatchObject({ ok: false, refused: true });
      expect(helper.stats).toEqual({ checks: 3, skipped: 1, started: 1 });
    } finally {
      helper.close();
    }
  });

  it('starts a new helper after one exits, and sends it the whole render', async () => {
    const render = await renders();
    const helper = new CheckHelper({ directories: DIRECTORIES });
    try {
      await helper.check(render(['10.0.0.1']), signal());
      helper.close();
      expect(await helper.check(render(['10.0.0.2']), signal())).toMatchObject({ ok: true });
      expect(helper.stats).toMatchObject({ started: 2, skipped: 0 });
    } finally {
      helper.close();
    }
  });

  it('an aborted check rejects at once, and the next render is checked', async () => {
    const render = await renders();
    const helper = new CheckHelper({ directories: DIRECTORIES });
    try {
      const controller = new AbortController();
      const first = helper.check(render(['10.0.0.1']), controller.signal);
      controller.abort(new Error('term ended'));
      await expect(first).rejects.toThrow('term ended');
      expect(await helper.check(render(['10.0.0.2']), signal())).toMatchObject({ ok: true });
      expect(helper.stats.skipped).toBe(0);
    } finally {
      helper.close();
    }
  });

  it('runs the helper below the controller\'s CPU priority, by the niceness given', async () => {
    const render = await renders();
    const own = getPriority();
    for (const [niceness, expected] of [[undefined, Math.min(19, own + HELPER_NICENESS)], [3, Math.min(19, own + 3)]] as const) {
      const helper = new CheckHelper({ directories: DIRECTORIES, ...(niceness === undefined ? {} : { niceness }) });
      try {
        const verdict = helper.check(render(['10.0.0.1']), signal());
        await nextTurn();
        expect(getPriority(helper.pid as number)).toBe(expected);
        expect(await verdict).toMatchObject({ ok: true });
      } finally {
        helper.close();
      }
    }
    expect(() => new CheckHelper({ directories: DIRECTORIES, niceness: 20 })).toThrow('niceness must be an integer from 0 to 19, got 20');
  });

  it('hands a render to the helper only after the work already queued in this turn (the runtime sends of the same render)', async () => {
    const render = await renders();
    const helper = new CheckHelper({ directories: DIRECTORIES });
    try {
      const order: string[] = [];
      const verdict = helper.check(render(['10.0.0.1']), signal());
      process.nextTick(() => order.push(`tick: ${helper.stats.checks} sent`));
      void Promise.resolve().then(() => order.push(`microtask: ${helper.stats.checks} sent`));
      await nextTurn();
      order.push(`next turn: ${helper.stats.checks} sent`);
      expect(order).toEqual(['microtask: 0 sent', 'tick: 0 sent', 'next turn: 1 sent']);
      expect(await verdict).toMatchObject({ ok: true });
    } finally {
      helper.close();
    }
  });

  it('fails a check called before close() instead of starting a new helper for it', async () => {
    const render = await renders();
    const helper = new CheckHelper({ directories: DIRECTORIES });
    const verdict = helper.check(render(['10.0.0.1']), signal());
    helper.close();
    await expect(verdict).rejects.toThrow('the check helper was closed');
    expect(helper.stats).toMatchObject({ checks: 0, started: 0 });
  });
});

/** Lets the current turn of the event loop end (microtasks, process.nextTick, then the immediates queued before). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
