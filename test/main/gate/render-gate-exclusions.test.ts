// The render gate's per-object verdict, on real renders of the default template set and a fake
// checker: a refusal traced to a line costs only its Ingress; one no line names (or a check that
// times out) is narrowed down by bisection over namespaces, then over their Ingresses, each step
// one trial render and check; the gate then asks for a render without the culprits.
import { describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../../src/main/events/events.js';
import { findCulprits } from '../../../src/main/gate/culprit-search.js';
import { ObjectExclusions } from '../../../src/main/gate/object-exclusions.js';
import { resolveRefusal, type GateRender } from '../../../src/main/gate/refusal-resolver.js';
import { GATE_REFUSAL, RenderGate } from '../../../src/main/gate/render-gate.js';
import type { HaproxyVerdict } from '../../../src/main/gate/render-checker.js';
import type { KubeObject, RenderExclusions, TemplateSetSource } from '../../../src/worker/protocol.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { defaultTemplateSet, indexedStores, ingress, rule, service } from '../../helpers/cluster.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

const NAMESPACES = ['alpha', 'bravo', 'evil', 'kilo', 'slow', 'zulu'];
const OBJECTS: KubeObject[] = NAMESPACES.flatMap((ns) => [
  service(ns, 'web'),
  ingress(ns, 'one', { rules: [rule(`one.${ns}.test`, { path: '/', service: 'web' })] }),
  ingress(ns, 'two', { rules: [rule(`two.${ns}.test`, { path: '/', service: 'web' })] }),
]);

const PASS: HaproxyVerdict = { ok: true, refused: false, message: 'Configuration file is valid' };
/** A refusal no line of which names an object (the line is the http frontend's). */
const UNTRACEABLE: HaproxyVerdict = { ok: false, refused: true, message: "[ALERT]    (1) : config : parsing [haproxy.cfg:30] : something in 'frontend' section" };

class Renders {
  readonly engine = new TemplateEngine();
  readonly given = new Map<string, RenderExclusions>();
  count = 0;
  constructor(readonly set: TemplateSetSource) {}

  render(exclusions: RenderExclusions = { objects: [] }): GateRender {
    const stores = indexedStores(this.set, OBJECTS);
    const outcome = renderAndValidate(this.engine, { set: this.set, lookup: (name) => stores.get(name), storeVersion: 1, exclusions });
    if (!outcome.ok) throw new Error(outcome.message);
    const renderId = `t${++this.count}`;
    this.given.set(renderId, exclusions);
    return { renderId, haproxyConfig: outcome.haproxyConfig, auxiliaryFiles: outcome.auxiliaryFiles, origins: outcome.origins };
  }
}

const holds = (render: GateRender, ns: string, name = ''): boolean => render.haproxyConfig.includes(`backend ing_${ns}_${name}`);

describe('findCulprits', () => {
  it('finds each culprit with one binary search, in a bounded number of checks', async () => {
    const units = Array.from({ length: 100 }, (_, i) => i);
    const passes = vi.fn(async (excluded: readonly number[]) => excluded.includes(17) && excluded.includes(60));
    const found = await findCulprits(units, passes);
    expect([...found.culprits].sort((a, b) => a - b)).toEqual([17, 60]);
    expect(found.resolved).toBe(true);
    // One check without every unit, then per culprit ceil(log2 n) + 1.
    expect(found.checks).toBeLessThanOrEqual(1 + 2 * (Math.ceil(Math.log2(100)) + 1));
    expect(passes).toHaveBeenCalledTimes(found.checks);
  });

  it('blames no unit when the render fails even without all of them, after one check', async () => {
    const found = await findCulprits(['a', 'b', 'c'], async () => false);
    expect(found).toEqual({ culprits: [], resolved: false, checks: 1 });
  });

  it('stops after maxCulprits, unresolved', async () => {
    const found = await findCulprits([1, 2, 3, 4, 5, 6], async (excluded) => excluded.length === 6, 2);
    expect(found.resolved).toBe(false);
    expect(found.culprits).toHaveLength(2);
  });
});

describe('resolveRefusal', () => {
  it('bisects by namespace, then by Ingress, when no line names an object', async () => {
    const renders = new Renders(await defaultTemplateSet());
    const check = vi.fn(async (render: GateRender) => (holds(render, 'evil', 'two') ? UNTRACEABLE : PASS));
    const first = renders.render();
    const round = await resolveRefusal(
      { render: first, message: UNTRACEABLE.message, timedOut: false, exclusions: { objects: [] }, check, rerender: async (e) => renders.render(e) },
      new AbortController().signal,
    );
    expect(round.method).toBe('bisection');
    expect(round.exclusions.map((e) => `${e.namespace}/${e.name}`)).toEqual(['evil/two']);
    expect(round.exclusions[0]?.reason).toContain('found by bisection');
    expect(round.checks).toBe(check.mock.calls.length);
    // log2 steps per level: 6 namespaces, then 2 Ingresses.
    expect(round.checks).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(6)) + 1 + (1 + 1 + 1));
  });

  it('blames no Ingress when only the rest of a namespace is to blame', async () => {
    const renders = new Renders(await defaultTemplateSet());
    // Refused unless the whole namespace is out: something else of it (a ConfigMap, say) is the cause.
    const check = async (render: GateRender): Promise<HaproxyVerdict> => ((renders.given.get(render.renderId)?.namespaces ?? []).includes('kilo') ? PASS : UNTRACEABLE);
    const round = await resolveRefusal(
      { render: renders.render(), message: UNTRACEABLE.message, timedOut: false, exclusions: { objects: [] }, check, rerender: async (e) => renders.render(e) },
      new AbortController().signal,
    );
    expect(round.exclusions).toEqual([]);
    expect(round.method).toBe('none');
  });
});

describe('RenderGate with exclusions', () => {
  async function harness(checker: (render: GateRender, signal: AbortSignal) => Promise<HaproxyVerdict>) {
    const renders = new Renders(await defaultTemplateSet());
    const clock = new FakeClock();
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const publish = vi.spyOn(bus, 'publish');
    bus.start();
    const exclusions = new ObjectExclusions();
    const gate = new RenderGate({ bus, clock, logger: silentLogger(), checker, timeoutMs: 5000, exclusions, rerender: async (e) => renders.render(e) });
    const term = new AbortController();
    const running = gate.start(term.signal);
    await gate.whenReady();
    const published = <T extends ControllerEvent['type']>(type: T): EventOf<T>[] =>
      publish.mock.calls.map(([e]) => e).filter((e): e is EventOf<T> => e.type === type);
    const submit = async (render: GateRender): Promise<void> => {
      const fields = { ...render, checksum: 'c', configBytes: render.haproxyConfig.length, auxiliaryFileCount: 0, durationMs: 1, triggerReason: 'resource_change', coalescible: true, storeVersion: 1 };
      bus.publish(newEvent('template.rendered', fields, undefined, clock));
      await flushMicrotasks();
    };
    const stop = async (): Promise<void> => {
      term.abort();
      await running;
    };
    return { renders, clock, gate, exclusions, published, submit, stop };
  }

  it("takes out the Ingress HAProxy's message names, then asks for a render without it", async () => {
    const h = await harness(async (render) => {
      const line = render.haproxyConfig.split('\n').findIndex((l) => l.startsWith('backend ing_evil_one')) + 2;
      return line > 1 ? { ok: false, refused: true, message: `[ALERT]    (1) : config : parsing [haproxy.cfg:${line}] : regex '[\\d-z]' is invalid.` } : PASS;
    });
    await h.submit(h.renders.render());
    const [verdict] = h.published('rendergate.completed');
    expect(verdict).toMatchObject({ ok: false, refused: true, newest: true, excluded: 1 });
    expect(h.exclusions.current().objects).toEqual([expect.objectContaining({ namespace: 'evil', name: 'one', reason: expect.stringContaining("HAProxy refused it: parsing [haproxy.cfg:") })]);
    expect(h.published('reconciliation.triggered')).toEqual([expect.objectContaining({ reason: GATE_REFUSAL, correlationId: verdict?.correlationId })]);
    // The render the Coordinator makes next leaves it out, and passes.
    await h.submit(h.renders.render(h.exclusions.current()));
    expect(h.published('rendergate.completed')[1]).toMatchObject({ ok: true });
    expect(h.gate.stats).toMatchObject({ passed: 1, refused: 1, excluded: 1, trialChecks: 0 });
    await h.stop();
  });

  it('counts a timeout as a refusal and finds the namespace whose render times out by bisection, never passing it', async () => {
    // `haproxy -c` never finishes on a config that holds slow/two (an expensive hash, say).
    const h = await harness((render, signal) =>
      holds(render, 'slow', 'two') ? new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))) : Promise.resolve(PASS),
    );
    await h.submit(h.renders.render());
    for (let i = 0; i < 40 && h.published('rendergate.completed').length === 0; i++) await h.clock.advance(5000);
    const [verdict] = h.published('rendergate.completed');
    expect(verdict).toMatchObject({ ok: false, refused: true, excluded: 1, message: 'haproxy -c did not finish within 5000 ms' });
    expect(h.exclusions.current().objects.map((e) => `${e.namespace}/${e.name}`)).toEqual(['slow/two']);
    expect(h.exclusions.current().objects[0]?.reason).toContain('could not check the config in time');
    expect(h.gate.stats.trialChecks).toBeGreaterThan(0);
    expect(h.gate.stats.trialChecks).toBeLessThanOrEqual(1 + 2 * (Math.ceil(Math.log2(NAMESPACES.length)) + 2));
    await h.stop();
  });

  it('blames nobody for a timeout that does not happen again, and asks for a new render', async () => {
    let calls = 0;
    const h = await harness((_render, signal) =>
      ++calls === 1 ? new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))) : Promise.resolve(PASS),
    );
    await h.submit(h.renders.render());
    await h.clock.advance(5000);
    expect(h.published('rendergate.completed')).toEqual([expect.objectContaining({ ok: false, refused: true, message: 'haproxy -c did not finish within 5000 ms' })]);
    expect(h.exclusions.size).toBe(0);
    expect(h.published('reconciliation.triggered')).toEqual([expect.objectContaining({ reason: GATE_REFUSAL })]);
    expect(h.gate.stats.trialChecks).toBe(1);
    await h.stop();
  });

  it('holds every change, asking for no render, when the refusal cannot be pinned on any object', async () => {
    const h = await harness(async () => UNTRACEABLE);
    await h.submit(h.renders.render());
    expect(h.published('rendergate.completed')).toEqual([expect.objectContaining({ ok: false, refused: true })]);
    expect(h.published('rendergate.completed')[0]?.excluded).toBeUndefined();
    expect(h.published('reconciliation.triggered')).toEqual([]);
    expect(h.exclusions.size).toBe(0);
    await h.stop();
  });
});
