import { describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { haproxyVersion } from '../../../src/main/haproxy/haproxy-check.js';
import { haproxyRenderChecker, prefixRewriter, type CheckableRender, type HaproxyVerdict } from '../../../src/main/gate/render-checker.js';
import { RenderGate, refusalMessage, type RenderGateOptions } from '../../../src/main/gate/render-gate.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../../src/main/events/events.js';
import type { RenderPatch } from '../../../src/worker/protocol.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';
import { deferred, flushMicrotasks, type Deferred } from '../../helpers/async.js';
import { endpointSlice, ingress, renderOk, rule, service, tlsSecret } from '../../helpers/cluster.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

const DIRECTORIES = { mapsDir: '/srv/haptic/out/maps', filesDir: '/srv/haptic/out/files', certsDir: '/srv/haptic/out/certs' };

/** A checker the test answers by hand, one call at a time. */
class ManualChecker {
  readonly calls: { render: CheckableRender; signal: AbortSignal; answer: Deferred<HaproxyVerdict> }[] = [];
  active = 0;
  maxActive = 0;

  readonly check = (render: CheckableRender, signal: AbortSignal): Promise<HaproxyVerdict> => {
    const answer = deferred<HaproxyVerdict>();
    this.calls.push({ render, signal, answer });
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    return answer.promise.finally(() => this.active--);
  };

  get checked(): string[] {
    return this.calls.map((c) => c.render.renderId);
  }

  pass(index: number): void {
    this.calls[index]?.answer.resolve({ ok: true, refused: false, message: 'Configuration file is valid' });
  }
}

async function harness(options: Partial<RenderGateOptions> = {}) {
  const clock = new FakeClock();
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const publish = vi.spyOn(bus, 'publish');
  bus.start();
  const checker = new ManualChecker();
  const gate = new RenderGate({ bus, clock, logger: silentLogger(), checker: checker.check, timeoutMs: 5000, ...options });
  const term = new AbortController();
  const running = gate.start(term.signal);
  await gate.whenReady();
  const verdicts = (): EventOf<'rendergate.completed'>[] =>
    publish.mock.calls.map(([e]) => e).filter((e): e is EventOf<'rendergate.completed'> => e.type === 'rendergate.completed');
  let count = 0;
  const render = async (haproxyConfig = 'global\n', auxiliaryFiles = { maps: {}, files: {}, certificates: {} }, patch?: RenderPatch): Promise<EventOf<'template.rendered'>> => {
    const event = newEvent(
      'template.rendered',
      {
        renderId: `r${++count}`,
        haproxyConfig,
        auxiliaryFiles,
        checksum: `c${count}`,
        configBytes: haproxyConfig.length,
        auxiliaryFileCount: 0,
        durationMs: 1,
        triggerReason: 'resource_change',
        coalescible: true,
        storeVersion: count,
        ...(patch === undefined ? {} : { patch }),
      },
      undefined,
      clock,
    );
    bus.publish(event);
    await flushMicrotasks();
    return event;
  };
  const stop = async (): Promise<void> => {
    term.abort();
    await running;
  };
  return { clock, bus, gate, checker, term, running, verdicts, render, stop };
}

describe('RenderGate', () => {
  it('runs one check at a time, and next checks only the newest of the renders that arrived meanwhile', async () => {
    const h = await harness();
    await h.render();
    await h.render();
    await h.render();
    const newest = await h.render();
    expect(h.checker.checked).toEqual(['r1']);
    h.checker.pass(0);
    await flushMicrotasks();
    expect(h.checker.checked).toEqual(['r1', newest.renderId]);
    h.checker.pass(1);
    await flushMicrotasks();
    expect(h.checker.maxActive).toBe(1);
    // r1's verdict is not about the newest render: r4 arrived while it ran.
    expect(h.verdicts().map((v) => [v.renderId, v.ok, v.newest])).toEqual([
      ['r1', true, false],
      ['r4', true, true],
    ]);
    expect(h.verdicts()[1]?.correlationId).toBe(newest.correlationId);
    await h.stop();
  });

  it('hands the checker a render that replaced waiting ones it patches as one patch of the render checked before', async () => {
    const h = await harness();
    const files = { maps: {}, files: {}, certificates: {} };
    await h.render('global\n');
    await h.render('gXlobal\n', files, { from: 'r1', edits: { config: [{ at: 1, remove: 0, text: 'X' }] } });
    const newest = await h.render('gXlobaL\n', files, { from: 'r2', edits: { config: [{ at: 6, remove: 1, text: 'L' }] } });
    h.checker.pass(0);
    await flushMicrotasks();
    expect(h.checker.checked).toEqual(['r1', newest.renderId]);
    const checked = h.checker.calls[1]?.render as EventOf<'template.rendered'>;
    expect(checked.patch).toEqual({ from: 'r1', edits: { config: [{ at: 1, remove: 0, text: 'X' }, { at: 5, remove: 1, text: 'L' }] } });
    expect(checked.haproxyConfig).toBe(newest.haproxyConfig);
    h.checker.pass(1);
    await flushMicrotasks();
    expect(h.verdicts().map((v) => v.renderId)).toEqual(['r1', 'r3']);
    await h.stop();
  });

  it('hands the checker a render whose patch is of a render it did not replace as it is', async () => {
    const h = await harness();
    await h.render('global\n');
    await h.render('other\n');
    const newest = await h.render('gXlobal\n', { maps: {}, files: {}, certificates: {} }, { from: 'r1', edits: { config: [{ at: 1, remove: 0, text: 'X' }] } });
    h.checker.pass(0);
    await flushMicrotasks();
    expect(h.checker.calls[1]?.render).toBe(newest);
    h.checker.pass(1);
    await h.stop();
  });

  it('counts a check that outlives its timeout as a refusal of that render, and aborts it', async () => {
    const h = await harness({ timeoutMs: 5000 });
    await h.render();
    await h.clock.advance(4999);
    expect(h.verdicts()).toEqual([]);
    await h.clock.advance(1);
    expect(h.checker.calls[0]?.signal.aborted).toBe(true);
    expect(h.verdicts()).toEqual([expect.objectContaining({ renderId: 'r1', ok: false, refused: true, newest: true, message: 'haproxy -c did not finish within 5000 ms', durationMs: 5000 })]);
    expect(h.gate.stats).toEqual({ passed: 0, refused: 1, unknown: 0, excluded: 0, trialChecks: 0 });
    // The gate is free for the next render.
    await h.render();
    expect(h.checker.checked).toEqual(['r1', 'r2']);
    await h.stop();
  });

  it("carries HAProxy's [ALERT] lines in a refusal's message", async () => {
    const h = await harness();
    await h.render();
    h.checker.calls[0]?.answer.resolve({
      ok: false,
      refused: true,
      message: [
        '[NOTICE]   (1) : haproxy version is 2.6.12',
        "[ALERT]    (1) : config : parsing [haproxy.cfg:52] : unknown keyword 'bogus' in 'backend' section",
        '[ALERT]    (1) : config : Fatal errors found in configuration.',
      ].join('\n'),
    });
    await flushMicrotasks();
    expect(h.verdicts()).toEqual([
      expect.objectContaining({
        ok: false,
        refused: true,
        message: "[ALERT]    (1) : config : parsing [haproxy.cfg:52] : unknown keyword 'bogus' in 'backend' section\n[ALERT]    (1) : config : Fatal errors found in configuration.",
      }),
    ]);
    await h.stop();
  });

  it('reports a checker that fails to run as unknown', async () => {
    const h = await harness({ checker: () => Promise.reject(new Error('EACCES')) });
    await h.render();
    expect(h.verdicts()).toEqual([expect.objectContaining({ ok: false, refused: false, message: 'the check could not run: EACCES' })]);
    await h.stop();
  });

  it('publishes nothing for a check its term ended during, and aborts it', async () => {
    const h = await harness();
    await h.render();
    await h.stop();
    expect(h.checker.calls[0]?.signal.aborted).toBe(true);
    expect(h.verdicts()).toEqual([]);
  });
});

describe('refusalMessage', () => {
  it('keeps the whole output when HAProxy printed no alert', () => {
    expect(refusalMessage('  something odd\n')).toBe('something odd');
  });
});

describe('prefixRewriter', () => {
  it('rewrites the three directories where a path starts, and nowhere else', () => {
    const rewrite = prefixRewriter(DIRECTORIES, { mapsDir: '/tmp/x/maps', filesDir: '/tmp/x/files', certsDir: '/tmp/x/certs' });
    expect(rewrite('map(/srv/haptic/out/maps/host.map) crt-list /srv/haptic/out/files/crt-list.txt\n  crt /srv/haptic/out/certs\n')).toBe(
      'map(/tmp/x/maps/host.map) crt-list /tmp/x/files/crt-list.txt\n  crt /tmp/x/certs\n',
    );
    expect(rewrite('/a/srv/haptic/out/maps/x /srv/haptic/out/mapsold/y')).toBe('/a/srv/haptic/out/maps/x /srv/haptic/out/mapsold/y');
  });
});

// Real HAProxy: installed in the development image and in CI, where it must run.
const installed = (await haproxyVersion()) !== null;
const realHaproxy = installed || process.env.CI === 'true';

describe.runIf(realHaproxy)('RenderGate with the real haproxy -c', () => {
  async function exampleRender(): Promise<CheckableRender> {
    const set = await loadTemplateSet(undefined, { ...DIRECTORIES, runtimeSocket: '/srv/haptic/out/run/admin.sock' });
    const objects = [
      ingress('shop', 'web', {
        ingressClassName: 'haproxy',
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        rules: [rule('shop.example.com', { path: '/', service: 'web' })],
      }),
      service('shop', 'web'),
      endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.2']),
      tlsSecret('shop', 'shop-tls'),
    ];
    const result = renderOk(set, objects);
    return { renderId: 'real', haproxyConfig: result.haproxyConfig, auxiliaryFiles: result.auxiliaryFiles };
  }

  it('passes a default-template render whose maps, files and certificates exist only in its private copy', async () => {
    const render = await exampleRender();
    const verdict = await haproxyRenderChecker({ directories: DIRECTORIES })(render, AbortSignal.timeout(30_000));
    expect(verdict).toMatchObject({ ok: true, refused: false });
  });

  it("refuses a broken render through the gate, with HAProxy's alert naming the line", async () => {
    const render = await exampleRender();
    const broken = render.haproxyConfig.replace('  balance roundrobin\n', '  balance roundrobin\n  bogus-keyword 1\n');
    const line = broken.split('\n').findIndex((l) => l.includes('bogus-keyword')) + 1;
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const publish = vi.spyOn(bus, 'publish');
    bus.start();
    const gate = new RenderGate({ bus, directories: DIRECTORIES, logger: silentLogger() });
    const term = new AbortController();
    const running = gate.start(term.signal);
    await gate.whenReady();
    bus.publish(
      newEvent('template.rendered', {
        renderId: 'broken',
        haproxyConfig: broken,
        auxiliaryFiles: render.auxiliaryFiles,
        checksum: 'c',
        configBytes: broken.length,
        auxiliaryFileCount: 0,
        durationMs: 1,
        triggerReason: 'resource_change',
        coalescible: true,
        storeVersion: 1,
      }),
    );
    const verdict = await eventually(
      () => publish.mock.calls.map(([e]) => e).find((e): e is EventOf<'rendergate.completed'> => e.type === 'rendergate.completed'),
      'the verdict on the broken render',
      30_000,
    );
    term.abort();
    await running;
    expect(verdict).toMatchObject({ renderId: 'broken', ok: false, refused: true, newest: true });
    expect(verdict.message).toContain(`[haproxy.cfg:${line}] : unknown keyword 'bogus-keyword'`);
    expect(verdict.message.split('\n').every((l) => l.includes('[ALERT]'))).toBe(true);
  });

  it('reports a missing binary as unknown, not as a refusal', async () => {
    const verdict = await haproxyRenderChecker({ directories: DIRECTORIES, binary: '/nonexistent/haproxy' })(await exampleRender(), AbortSignal.timeout(30_000));
    expect(verdict).toMatchObject({ ok: false, refused: false });
  });
});
