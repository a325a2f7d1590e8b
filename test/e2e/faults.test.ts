// Fault injection during a flood: each fault hits the engine while synthetic churn runs, and each
// test ends once the engine has converged: the newest render is of the final store version and
// routes exactly what an inline render of the final stores routes. Faults here: a worker that
// crashes, hangs or runs out of memory, an output directory that turns unwritable and back, and
// leadership lost in the middle of a render.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/main/core/logger.js';
import { Engine } from '../../src/main/engine.js';
import type { EventOf } from '../../src/main/events/events.js';
import type { Elector, LeadershipCallbacks } from '../../src/main/leadership/elector.js';
import { OutputDirectory } from '../../src/main/output/output-directory.js';
import { OutputWriter } from '../../src/main/output/output-writer.js';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import { PoolPipeline } from '../../src/main/pipeline/pool/pool-pipeline.js';
import { ChangeBatcher } from '../../src/main/sources/change-batcher.js';
import { SyntheticCluster } from '../../src/main/sources/synthetic/synthetic-cluster.js';
import { SyntheticChurn } from '../../src/main/sources/synthetic/synthetic-churn.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import type { TemplateSetSource } from '../../src/worker/protocol.js';
import { FaultSwitch } from '../fixtures/workers/fault-switch.js';
import { eventually } from '../helpers/eventually.js';

/** An elector the test drives: leadership starts and ends when the test says. */
class ManualElector implements Elector {
  readonly identity = 'manual';
  #callbacks: LeadershipCallbacks | undefined;

  async run(callbacks: LeadershipCallbacks, signal: AbortSignal): Promise<void> {
    this.#callbacks = callbacks;
    callbacks.onBecameLeader();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    callbacks.onLostLeadership('stopping');
  }

  lose(): void {
    this.#callbacks?.onLostLeadership('test');
  }

  win(): void {
    this.#callbacks?.onBecameLeader();
  }
}

interface Rig {
  readonly engine: Engine;
  readonly cluster: SyntheticCluster;
  readonly renders: EventOf<'template.rendered'>[];
  readonly running: Promise<void>;
  readonly stop: AbortController;
  churn(ms: number): Promise<void>;
}

let set: TemplateSetSource;
let inline: InlinePipeline;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  set = await loadTemplateSet();
  inline = new InlinePipeline({ templateSet: set });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function rig(options: { pool?: PoolPipeline; elector?: Elector; writer?: (engine: Engine) => void } = {}): Promise<Rig> {
  const pool = options.pool ?? (await PoolPipeline.create({ templateSet: set, threads: 2, logger: silentLogger() }));
  const engine = await Engine.create({ templateSet: set, pipeline: pool, logger: silentLogger(), ...(options.elector === undefined ? {} : { elector: options.elector }) });
  options.writer?.(engine);
  const cluster = new SyntheticCluster({ ingresses: 150, seed: 3 });
  cluster.populate(engine.stores);
  const renders: EventOf<'template.rendered'>[] = [];
  const observer = engine.bus.subscribe('faults-observer', { types: ['template.rendered'], lossy: true, bufferSize: 100_000 });
  void (async () => {
    for await (const event of observer) renders.push(event);
  })();
  const stop = new AbortController();
  const running = engine.start(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await running;
    observer.close();
    await pool.destroy();
  });
  await engine.whenStarted();
  const churn = async (ms: number): Promise<void> => {
    const driver = new SyntheticChurn({ cluster, stores: engine.stores, sink: new ChangeBatcher(engine.bus), rate: 400, total: Math.round((400 * ms) / 1000) });
    await driver.start();
  };
  return { engine, cluster, renders, running, stop, churn };
}

/** The newest render is of the final store version and routes what an inline render routes. */
async function expectConverged(r: Rig, what: string): Promise<void> {
  const final = r.engine.stores.version;
  const latest = await eventually(() => {
    const last = r.renders.at(-1);
    return last !== undefined && last.storeVersion === final ? last : undefined;
  }, `${what}: a render of store version ${final}`, 60_000);
  const expected = await inline.execute(new AbortController().signal, r.engine.stores, 'reconcile');
  expect(latest.auxiliaryFiles.maps).toEqual(expected.auxiliaryFiles.maps);
  const backends = (config: string): string[] => [...config.matchAll(/^backend (\S+)/gm)].map((m) => m[1] as string).sort();
  expect(backends(latest.haproxyConfig)).toEqual(backends(expected.haproxyConfig));
}

describe('faults during a flood', () => {
  it.each(['crash', 'hang', 'oom'] as const)('converges after a render worker %s', async (fault) => {
    const faults = new FaultSwitch();
    const pool = await PoolPipeline.create({
      templateSet: set,
      threads: 2,
      logger: silentLogger(),
      worker: faults.worker,
      renderTimeoutMs: 2000,
      resourceLimits: { maxOldGenerationSizeMb: 96 },
    });
    const r = await rig({ pool });
    const flood = r.churn(600);
    faults.arm(fault);
    await faults.claimed();
    await flood;
    await expectConverged(r, `after ${fault}`);
    expect(pool.stats.workersReplaced).toBeGreaterThanOrEqual(1);
  });

  it('converges after leadership is lost during a render and won again', async () => {
    const elector = new ManualElector();
    const r = await rig({ elector });
    const flood = r.churn(400);
    await eventually(() => r.renders.length > 0, 'a first render');
    elector.lose();
    expect(r.engine.isLeader).toBe(false);
    await flood;
    const rendersWhileFollower = r.renders.length;
    await r.churn(100);
    expect(r.renders.length).toBe(rendersWhileFollower);
    elector.win();
    await expectConverged(r, 'after leadership came back');
  });

  it('converges after the output directory turns unwritable and writable again', async () => {
    const base = await mkdtemp(join(tmpdir(), 'faults-out-'));
    cleanups.push(() => rm(base, { recursive: true, force: true }));
    // A file where the output directory should be makes every write fail, as root too.
    const root = join(base, 'out');
    await writeFile(root, 'in the way');
    let writer: OutputWriter | undefined;
    const r = await rig({
      writer: (engine) => {
        writer = new OutputWriter({ bus: engine.bus, directory: new OutputDirectory(root), clock: engine.clock, logger: silentLogger(), retryMs: 20 });
        engine.addLeaderComponent(writer);
      },
    });
    await r.churn(300);
    await eventually(() => (writer?.stats.failures ?? 0) > 0, 'a failed write');
    await rm(root);
    await r.churn(100);
    await expectConverged(r, 'after the directory came back');
    const latest = r.renders.at(-1) as EventOf<'template.rendered'>;
    await eventually(async () => (await readFile(join(root, 'haproxy.cfg'), 'utf8').catch(() => '')) === latest.haproxyConfig, 'the final config on disk');
    expect(writer?.ready).toBe(true);
  });
});
