// Leadership terms never overlap: when leadership is lost and won back before the old term's
// leader components have stopped (a reload still in flight), the new term starts them only once
// they have, so an ending term cannot undo what the new one set up.
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/main/engine.js';
import { SwitchableElector } from '../../src/main/tools/soak/switchable-elector.js';
import { deferred, flushMicrotasks, waitUntil } from '../helpers/async.js';
import { defaultTemplateSet } from '../helpers/cluster.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { silentLogger } from '../helpers/loggers.js';

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

/** A leader component whose term ends only once `finish` is called (work in flight). */
class SlowToStop {
  readonly log: string[] = [];
  #finish = deferred<void>();
  #terms = 0;
  whenReady(): Promise<void> {
    return Promise.resolve();
  }
  async start(term: AbortSignal): Promise<void> {
    const n = ++this.#terms;
    this.log.push(`start ${n}`);
    await new Promise<void>((resolve) => term.addEventListener('abort', () => resolve(), { once: true }));
    await this.#finish.promise;
    this.#finish = deferred<void>();
    this.log.push(`stopped ${n}`);
  }
  finish(): void {
    this.#finish.resolve();
  }
}

describe('Engine leadership terms', () => {
  it('starts the next term of a leader component only once its previous term has stopped', async () => {
    const elector = new SwitchableElector();
    const engine = await Engine.create({ templateSet: await defaultTemplateSet(), pipeline: 'inline', elector, logger: silentLogger(), clock: new FakeClock() });
    const component = new SlowToStop();
    engine.addLeaderComponent(component);
    const stop = new AbortController();
    stops.push(stop);
    const running = engine.start(stop.signal);
    await waitUntil(() => component.log.length === 1, 'the first term');
    elector.stepDown();
    elector.stepUp();
    await flushMicrotasks();
    expect(engine.isLeader).toBe(true);
    expect(component.log).toEqual(['start 1']);
    component.finish();
    await waitUntil(() => component.log.length === 3, 'the second term');
    expect(component.log).toEqual(['start 1', 'stopped 1', 'start 2']);
    stop.abort();
    component.finish();
    await running;
    expect(component.log).toEqual(['start 1', 'stopped 1', 'start 2', 'stopped 2']);
  });
});
