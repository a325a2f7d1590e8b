// The soak against a real HAProxy (`soak --haproxy`). Before the engine exists, `prepareHaproxySoak`
// picks HAProxy's listening ports on a loopback address of its own, starts echo backends on other
// loopback addresses (the synthetic pods: every endpoint is one of them, so every route serves) and
// gives the template values and the cluster's pod addresses. `attachHaproxySoak` then adds the
// `run --haproxy` deploy pieces (soak-deploy.ts) to the engine, and runs, during the
// flood: the paced Ingress edits that force reloads, the traffic, the sampling of HAProxy's
// processes, and the HAProxy faults (SIGKILL of the current worker or of the master).
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { every, type Clock } from '../../core/clock.js';
import type { Engine } from '../../engine.js';
import type { ObjectExclusions } from '../../gate/object-exclusions.js';
import { OutputDirectory } from '../../output/output-directory.js';
import type { ChangeSink } from '../../sources/synthetic/synthetic-churn.js';
import type { SyntheticCluster } from '../../sources/synthetic/synthetic-cluster.js';
import { startEchoBackend, type EchoBackend } from '../echo-backends.js';
import { killHaproxyProcess, type HaproxyProcessKind } from './haproxy-kill.js';
import { HaproxySampler } from './haproxy-sampler.js';
import { addSoakDeploy, type SoakDeploy } from './soak-deploy.js';
import type { HaproxyMeasurement } from './haproxy-report.js';
import type { HaproxySoakOptions } from './soak-options.js';
import { httpProbe, SoakTraffic } from './soak-traffic.js';

/** HAProxy listens here; the echo backends on ECHO_NET.1 ... ECHO_NET.<n>. */
const HAPROXY_ADDRESS = '127.0.90.1';
const ECHO_NET = '127.0.91';
/** Echo backends per endpoint slot of a slice (3 slots): a rolling deploy moves a pod among them. */
const ECHOES_PER_SLOT = 4;
const SLOTS = 3;
/** Apps whose hosts carry the traffic; the churn never deletes them. */
export const TRAFFIC_HOSTS = 50;
/** A HAProxy kill, from finding its target to HAProxy running again, is bounded by this. */
export const RESTART_TIMEOUT_MS = 60_000;

export interface PreparedHaproxySoak {
  /** Template values: where HAProxy listens, its runtime socket, loopback endpoints allowed. */
  readonly values: Readonly<Record<string, unknown>>;
  /** For SyntheticCluster: where each pod listens. */
  readonly podAddress: (index: number, pod: number, slot: number) => string;
  readonly podPort: number;
  /** Every Ingress carries these: no health checks (see the report's notes). */
  readonly annotations: Readonly<Record<string, string>>;
  readonly address: string;
  readonly httpPort: number;
  close(): Promise<void>;
}

export async function prepareHaproxySoak(out: string): Promise<PreparedHaproxySoak> {
  const [httpPort, httpsPort, statusPort] = await freePorts(HAPROXY_ADDRESS, 3);
  const echoes = await startEchoes(SLOTS * ECHOES_PER_SLOT);
  const podPort = Number(echoes[0]?.address.split(':')[1]);
  return {
    values: {
      runtimeSocket: join(out, 'run', 'admin.sock'),
      bindAddress: HAPROXY_ADDRESS,
      httpPort,
      httpsPort,
      statusPort,
      allowLoopbackEndpoints: true,
      // Three endpoints per Service: one block of slots holds them with a spare.
      serverSlots: 4,
    },
    podAddress: (index, pod, slot) => `${ECHO_NET}.${1 + slot * ECHOES_PER_SLOT + ((index + pod) % ECHOES_PER_SLOT)}`,
    podPort,
    // A health check holds a descriptor per server slot: 40,000 at 10,000 Ingresses, past the
    // descriptor limit of a shell (ulimit -n); checks are not what the soak measures.
    annotations: { 'haproxy.org/check': 'false' },
    address: HAPROXY_ADDRESS,
    httpPort: httpPort as number,
    close: async () => {
      await Promise.all(echoes.map((e) => e.close()));
    },
  };
}

export interface HaproxySoakRig {
  readonly engine: Engine;
  readonly exclusions: ObjectExclusions;
  readonly out: string;
  readonly prepared: PreparedHaproxySoak;
  readonly options: HaproxySoakOptions;
  readonly cluster: SyntheticCluster;
  readonly sink: ChangeSink;
  readonly clock: Clock;
  readonly logger: Logger;
  /** True while a HAProxy fault is open (the traffic counts its failures apart). */
  readonly faultOpen: () => boolean;
  /** A progress line worth seeing (a kill that had to try steps again). */
  readonly note?: (line: string) => void;
}

export class HaproxySoak {
  readonly deploy: SoakDeploy;
  readonly traffic: SoakTraffic;
  readonly processes: HaproxySampler;
  readonly #rig: HaproxySoakRig;
  readonly #closeProbe: () => void;
  readonly #stopTimers: (() => void)[] = [];
  #restarts = 0;
  #oldWorkersStopped = 0;
  #reloadEdits = 0;

  /** Adds the deploy pieces to the engine (before it starts). */
  constructor(rig: HaproxySoakRig, periodMs: number) {
    this.#rig = rig;
    const hooks = {
      onHaproxyRestart: () => void this.#restarts++,
      onOldWorkersStopped: (count: number) => void (this.#oldWorkersStopped += count),
    };
    this.deploy = addSoakDeploy(rig.engine, {
      out: rig.out,
      output: new OutputDirectory(rig.out),
      haproxy: { maxOldWorkers: rig.options.maxOldWorkers },
      exclusions: rig.exclusions,
      hooks,
      clock: rig.clock,
      logger: rig.logger,
      stdout: 'ignore',
    });
    const { probe, close } = httpProbe(rig.prepared.address, rig.prepared.httpPort);
    this.#closeProbe = close;
    const hosts = Array.from({ length: Math.min(TRAFFIC_HOSTS, rig.cluster.options.ingresses) }, (_, i) => rig.cluster.host(i));
    this.traffic = new SoakTraffic({ clock: rig.clock, probe, hosts, ratePerSecond: rig.options.trafficRate, faultOpen: rig.faultOpen });
    this.processes = new HaproxySampler({ clock: rig.clock, periodMs, showProc: (signal) => this.deploy.process.masterCli.showProc(signal) });
  }

  /** Starts the traffic, the sampling and the paced reload edits (once HAProxy serves). */
  start(): void {
    const { cluster, sink, clock, options } = this.#rig;
    this.traffic.start();
    this.processes.start();
    const stable = Math.min(TRAFFIC_HOSTS, cluster.options.ingresses);
    this.#stopTimers.push(
      every(clock, options.reloadIntervalSeconds * 1000, () => {
        const n = this.#reloadEdits++;
        // A new server timeout changes the backend's section: HAProxy must reload.
        cluster.editIngress(this.#rig.engine.stores, n % stable, { 'haproxy.org/timeout-server': `${30 + (n % 30)}s` });
        sink.record('ingresses', 'modified');
        sink.flush();
      }),
    );
  }

  /** SIGKILLs HAProxy's current worker or its master; resolves once HAProxy runs again (haproxy-kill.ts), rejects past RESTART_TIMEOUT_MS. */
  async kill(which: HaproxyProcessKind): Promise<void> {
    const master = this.deploy.process.masterCli;
    const outcome = await killHaproxyProcess({ which, showProc: () => master.showProc(), kill: (pid) => process.kill(pid, 'SIGKILL'), clock: this.#rig.clock, boundMs: RESTART_TIMEOUT_MS });
    if (outcome.retries > 0) this.#rig.note?.(`killing HAProxy's ${which} ${outcome.pid} took ${outcome.retries} retries (first: ${outcome.firstRetry ?? '?'})`);
  }

  /** Stops the edits, the traffic and the sampling (HAProxy keeps running until `close`). */
  async stop(): Promise<void> {
    for (const stop of this.#stopTimers.splice(0)) stop();
    await this.traffic.stop();
    await this.processes.stop();
  }

  measurement(deployments: HaproxyMeasurement['deployments']): HaproxyMeasurement {
    const o = this.#rig.options;
    return {
      maxOldWorkers: o.maxOldWorkers,
      trafficRate: o.trafficRate,
      reloadIntervalSeconds: o.reloadIntervalSeconds,
      deployments: { ...deployments },
      reloadEdits: this.#reloadEdits,
      restarts: this.#restarts,
      oldWorkersStopped: this.#oldWorkersStopped,
      peakRssMb: this.processes.peakRssMb,
      peakWorkers: this.processes.peakWorkers,
      traffic: { ...this.traffic.totals, latency: this.traffic.latency },
    };
  }

  /** Stops everything, HAProxy included. */
  async close(): Promise<void> {
    await this.stop();
    this.#closeProbe();
    await this.deploy.target.stop();
  }
}

/** `count` ports free on `host` right now. */
async function freePorts(host: string, count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<Server>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, host, () => resolve(server));
    })),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Echo backends on ECHO_NET.1 ... ECHO_NET.<count>, all on one port (the EndpointSlices' port). */
async function startEchoes(count: number): Promise<EchoBackend[]> {
  for (let attempt = 1; ; attempt++) {
    const first = await startEchoBackend(`${ECHO_NET}.1`, 0);
    const port = Number(first.address.split(':')[1]);
    const echoes = [first];
    try {
      for (let i = 2; i <= count; i++) echoes.push(await startEchoBackend(`${ECHO_NET}.${i}`, port));
      return echoes;
    } catch (error) {
      await Promise.all(echoes.map((e) => e.close()));
      if (attempt >= 5) throw error;
    }
  }
}
