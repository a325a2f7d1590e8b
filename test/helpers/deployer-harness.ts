// The Deployer under test: a fake target, a fake clock, and renders of small configs (one backend
// per entry, its server slots, and a timeout as the structural knob) with their gate verdicts.
import { createHash } from 'node:crypto';
import { vi } from 'vitest';
import { EventBus } from '../../src/main/bus/event-bus.js';
import { Deployer, type DeployerOptions } from '../../src/main/deploy/deployer.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../src/main/events/events.js';
import { flushMicrotasks } from './async.js';
import { verdict } from './events.js';
import { FakeClock } from './fake-clock.js';
import { FakeDeployTarget, type FakeDeployTargetOptions } from './fake-deploy-target.js';
import { silentLogger } from './loggers.js';

export const MAPS_DIR = '/srv/haproxy/maps';

/** A small config: one backend per entry, its server slots, and the timeout (a structural knob). */
export interface Spec {
  readonly backends?: Readonly<Record<string, readonly string[]>>;
  readonly timeout?: string;
  readonly routes?: string;
}

export function config(spec: Spec): string {
  const backends = spec.backends ?? { be: ['10.0.0.1:80', '127.0.0.1:1 disabled'] };
  const out = ['global', '  daemon', '', 'defaults', '  mode http', `  timeout server ${spec.timeout ?? '50s'}`, ''];
  for (const [name, slots] of Object.entries(backends)) {
    out.push(`backend ${name}`, '  balance roundrobin', ...slots.map((slot, i) => `  server srv${i + 1} ${slot}`), '');
  }
  return out.join('\n');
}

/** A config of one backend with one server at `address`. */
export function oneServer(address: string, timeout = '50s'): string {
  return ['global', '', 'defaults', '  mode http', `  timeout server ${timeout}`, '', 'backend be', '  server srv1 ' + address, ''].join('\n');
}

/**
 * A Deployer on a fake clock and bus. One FakeDeployTarget by default (`target`); `fleet` gives
 * several (`targets`, in fleet mode), or none for a fleet filled later by `setTargets`.
 */
export class DeployerHarness<T extends FakeDeployTarget = FakeDeployTarget> {
  readonly clock = new FakeClock();
  readonly bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  readonly publish = vi.spyOn(this.bus, 'publish');
  readonly targets: readonly T[];
  readonly deployer: Deployer;
  readonly term = new AbortController();
  readonly latencies: number[] = [];
  storeVersion = 1;
  running: Promise<void> | undefined;
  #renders = 0;

  constructor(options: Partial<DeployerOptions> = {}, target: Omit<FakeDeployTargetOptions, 'clock'> = {}, fleet?: (clock: FakeClock) => T[]) {
    this.targets = fleet?.(this.clock) ?? [new FakeDeployTarget({ clock: this.clock, ...target }) as T];
    this.deployer = new Deployer({
      bus: this.bus,
      ...(fleet === undefined ? { target: this.targets[0] } : { targets: this.targets }),
      clock: this.clock,
      logger: silentLogger(),
      mapsDir: MAPS_DIR,
      minDeploymentIntervalMs: 2000,
      onEndpointChangeApplied: (seconds) => this.latencies.push(seconds),
      storeVersion: () => this.storeVersion,
      ...options,
    });
  }

  get target(): T {
    return this.targets[0] as T;
  }

  async start(): Promise<this> {
    this.bus.start();
    this.running = this.deployer.start(this.term.signal);
    await this.deployer.whenReady();
    await flushMicrotasks();
    return this;
  }

  /** Publishes a render of `spec`. */
  render(spec: Spec, triggerReason = 'resource_change'): Promise<EventOf<'template.rendered'>> {
    return this.publishRender(config(spec), { 'host.map': spec.routes ?? 'a.example/ be\n' }, triggerReason);
  }

  /** Publishes a render of this config text, and its verdict unless `ok` is null. */
  async renderText(haproxyConfig: string, ok: boolean | null = true): Promise<EventOf<'template.rendered'>> {
    const event = await this.publishRender(haproxyConfig, {});
    if (ok !== null) await this.verdict(event, ok ? 'ok' : 'refused');
    return event;
  }

  async publishRender(haproxyConfig: string, maps: Readonly<Record<string, string>>, triggerReason = 'resource_change'): Promise<EventOf<'template.rendered'>> {
    const event = newEvent(
      'template.rendered',
      {
        renderId: `r${++this.#renders}`,
        haproxyConfig,
        auxiliaryFiles: { maps, files: {}, certificates: {} },
        checksum: createHash('sha256').update(haproxyConfig).update(JSON.stringify(maps)).digest('hex'),
        configBytes: haproxyConfig.length,
        auxiliaryFileCount: Object.keys(maps).length,
        durationMs: 1,
        triggerReason,
        coalescible: true,
        storeVersion: this.storeVersion,
      },
      undefined,
      this.clock,
    );
    this.bus.publish(event);
    await flushMicrotasks();
    return event;
  }

  async verdict(render: { renderId: string }, outcome: 'ok' | 'refused' | 'unknown' = 'ok', newest = true): Promise<void> {
    this.bus.publish(verdict(render.renderId, { ok: outcome === 'ok', refused: outcome === 'refused', newest, message: outcome === 'refused' ? '[ALERT] bad' : '' }));
    await flushMicrotasks();
  }

  /** A render and its passing verdict. */
  async passed(spec: Spec, triggerReason?: string): Promise<EventOf<'template.rendered'>> {
    const render = await this.render(spec, triggerReason);
    await this.verdict(render);
    return render;
  }

  async drift(): Promise<void> {
    this.bus.publish(newEvent('drift.prevention.triggered', { timeSinceLastDeploymentMs: 60_000 }, undefined, this.clock));
    await flushMicrotasks();
  }

  get completed(): EventOf<'deployment.completed'>[] {
    return this.publish.mock.calls.map(([event]) => event).filter((e): e is EventOf<'deployment.completed'> => e.type === 'deployment.completed');
  }

  /** `kind/outcome` of each deployment.completed, in order. */
  get outcomes(): string[] {
    return this.completed.map((e) => `${e.kind}/${e.outcome}`);
  }

  async stop(): Promise<void> {
    this.term.abort();
    await this.clock.runAll();
    await this.running;
  }
}

