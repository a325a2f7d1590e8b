// The Coordinator and the render gate's exclusions: each render is given the objects the gate
// took out, the result (with its origin index) crosses as data in `template.rendered`, and an
// exclusion the render no longer applied (its object changed) is dropped.
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../../src/main/events/events.js';
import { ObjectExclusions } from '../../../src/main/gate/object-exclusions.js';
import { Coordinator } from '../../../src/main/reconcile/coordinator.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { Exclusion, OriginIndex } from '../../../src/worker/protocol.js';
import { waitUntil } from '../../helpers/async.js';
import { FakePipeline, pipelineResult } from '../../helpers/fake-pipeline.js';
import { silentLogger } from '../../helpers/loggers.js';

const EVIL: Exclusion = { kind: 'Ingress', namespace: 'evil', name: 'bad', version: '7', reason: "HAProxy refused it: regex '[\\d-z]' is invalid" };
const ORIGINS: OriginIndex = {
  objects: [{ kind: 'Ingress', namespace: 'shop', name: 'web', version: '3' }],
  sections: [{ keyword: 'backend', name: 'ing_shop_web_web_80', firstLine: 1, lastLine: 4, object: 0 }],
  names: { ing_shop_web_web_80: 0 },
};

async function started() {
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const published: ControllerEvent[] = [];
  bus.subscribe('test', { types: ['template.rendered'], bufferSize: 100 });
  const original = bus.publish.bind(bus);
  bus.publish = (event: ControllerEvent) => {
    published.push(event);
    return original(event);
  };
  const pipeline = new FakePipeline();
  const exclusions = new ObjectExclusions();
  const coordinator = new Coordinator({ eventBus: bus, pipeline, storeProvider: new StoreProvider(), logger: silentLogger(), exclusions });
  bus.start();
  const term = new AbortController();
  const running = coordinator.start(term.signal);
  await coordinator.whenReady();
  const rendered = (): EventOf<'template.rendered'>[] => published.filter((e): e is EventOf<'template.rendered'> => e.type === 'template.rendered');
  const render = async (rejections = pipelineResult().rejections): Promise<void> => {
    const calls = pipeline.callCount;
    bus.publish(newEvent('reconciliation.triggered', { reason: 'resource_change', coalescible: true }));
    await pipeline.waitForCalls(calls + 1);
    pipeline.call(calls).result.resolve(pipelineResult({ rejections, origins: ORIGINS }));
    await waitUntil(() => rendered().length > calls, 'template.rendered');
  };
  return { pipeline, exclusions, rendered, render, stop: async () => (term.abort(), await running) };
}

describe('Coordinator with the render gate exclusions', () => {
  it('gives every render the exclusions in force, and carries the origin index and exclusions in template.rendered', async () => {
    const h = await started();
    await h.render();
    expect(h.pipeline.call(0).options?.exclusions).toBeUndefined();
    expect(h.rendered()[0]?.origins).toEqual(ORIGINS);
    h.exclusions.add([EVIL]);
    await h.render([{ kind: 'Ingress', namespace: 'evil', name: 'bad', scope: 'object', reason: EVIL.reason }]);
    expect(h.pipeline.call(1).options?.exclusions).toEqual({ objects: [EVIL] });
    expect(h.rendered()[1]?.exclusions).toEqual({ objects: [EVIL] });
    // Applied: kept.
    expect(h.exclusions.has(EVIL)).toBe(true);
    await h.stop();
  });

  it('drops an exclusion the render did not apply (its object changed or is gone)', async () => {
    const h = await started();
    h.exclusions.add([EVIL]);
    await h.render([]);
    expect(h.exclusions.size).toBe(0);
    await h.render([]);
    expect(h.pipeline.call(1).options?.exclusions).toBeUndefined();
    await h.stop();
  });
});
