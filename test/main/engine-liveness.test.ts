// Engine.liveness, what /healthz reports: alive while everything it runs is running; not alive
// once a leader component failed while the engine ran on, once a source ended on its own, or once
// the engine's run is over. A component stopped by the engine's own signal is not a failure.
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/main/engine.js';
import type { Source } from '../../src/main/sources/source.js';
import { deferred, waitUntil } from '../helpers/async.js';
import { defaultTemplateSet } from '../helpers/cluster.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { silentLogger } from '../helpers/loggers.js';

const aborts: AbortController[] = [];
const runs: Promise<unknown>[] = [];

afterEach(async () => {
  for (const controller of aborts.splice(0)) controller.abort();
  await Promise.allSettled(runs.splice(0));
});

async function engine(sources?: readonly Source[]): Promise<Engine> {
  return Engine.create({ templateSet: await defaultTemplateSet(), pipeline: 'inline', logger: silentLogger(), clock: new FakeClock(), ...(sources === undefined ? {} : { sources }) });
}

function start(e: Engine): { readonly controller: AbortController; readonly running: Promise<void> } {
  const controller = new AbortController();
  const running = e.start(controller.signal);
  aborts.push(controller);
  runs.push(running);
  return { controller, running };
}

/** A leader component that runs until its term ends, or fails when told to. */
class Crashing {
  readonly #crash = deferred<void>();
  whenReady(): Promise<void> {
    return Promise.resolve();
  }
  async start(term: AbortSignal): Promise<void> {
    await Promise.race([this.#crash.promise, new Promise<void>((resolve) => term.addEventListener('abort', () => resolve(), { once: true }))]);
    if (!term.aborted) throw new Error('disk on fire');
  }
  crash(): void {
    this.#crash.resolve();
  }
}

/** A source that lists nothing, says every resource is synced, and ends when told to. */
function endingSource(): Source & { end(): void } {
  const ended = deferred<void>();
  return {
    kind: 'test',
    end: () => ended.resolve(),
    async run(resources, sink, signal) {
      for (const resource of resources) sink.synced(resource.name);
      await Promise.race([ended.promise, new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
    },
  };
}

describe('Engine liveness', () => {
  it('is alive before and while it runs', async () => {
    const e = await engine();
    expect(e.liveness()).toEqual({ alive: true });
    start(e);
    await e.whenStarted();
    expect(e.liveness()).toEqual({ alive: true });
  });

  it('is not alive once a leader component failed while the engine ran on, naming it and why', async () => {
    const e = await engine();
    const component = new Crashing();
    e.addLeaderComponent(component);
    start(e);
    await waitUntil(() => e.isLeader, 'leadership');
    component.crash();
    await waitUntil(() => !e.liveness().alive, 'liveness to fail');
    expect(e.liveness()).toEqual({ alive: false, stopped: { Crashing: 'failed: disk on fire' } });
  });

  it('is not alive once a source ended while the engine was running', async () => {
    const source = endingSource();
    const e = await engine([source]);
    start(e);
    await e.whenStarted();
    source.end();
    await waitUntil(() => !e.liveness().alive, 'liveness to fail');
    expect(e.liveness().stopped).toEqual({ 'source test': 'ended while the engine was running' });
  });

  it('is not alive once its run is over, but counts nothing its own stop ended as a failure', async () => {
    const e = await engine([endingSource()]);
    e.addLeaderComponent(new Crashing());
    const { controller, running } = start(e);
    await waitUntil(() => e.isLeader, 'leadership');
    controller.abort();
    await running;
    expect(e.liveness()).toEqual({ alive: false, stopped: { engine: 'the engine has stopped' } });
  });
});
