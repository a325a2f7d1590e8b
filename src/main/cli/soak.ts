// `haptic-reconciler soak` (`npm run soak -- --minutes M`): the synthetic flood with periodic
// faults; memory, event-loop delay, renders, failures and recoveries as JSON and an SVG chart.
// `--haproxy` deploys to a real HAProxy under traffic (soak-haproxy.json and .svg).
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { ENGINE_FAULT_ROTATION, HAPROXY_FAULT_ROTATION, parseFaultList, SOAK_DEFAULTS } from '../tools/soak/soak-options.js';
import { runSoak } from '../tools/soak/soak.js';
import { positiveInteger, positiveNumber } from './options.js';

export function registerSoak(program: Command): void {
  program
    .command('soak')
    .description(
      'long synthetic flood through the worker pool with a fault every interval (worker crash, hang, out-of-memory, leadership lost, output unwritable): ' +
        'reports RSS, heaps, event-loop delay, renders, failures and recoveries; exits 1 unless every fault recovered and memory stayed bounded',
    )
    .addOption(new Option('--minutes <m>', 'how long the flood lasts').argParser(positiveNumber).default(SOAK_DEFAULTS.minutes).conflicts('seconds'))
    .addOption(new Option('--seconds <s>', 'how long the flood lasts, in seconds (for short runs)').argParser(positiveNumber))
    .option('--ingresses <n>', 'synthetic Ingresses (each with a Service and an EndpointSlice)', positiveInteger, SOAK_DEFAULTS.ingresses)
    .option('--rate <changes/s>', `synthetic changes per second (default: ${SOAK_DEFAULTS.rate}, ${SOAK_DEFAULTS.haproxyRate} with --haproxy)`, positiveNumber)
    .addOption(new Option('--threads <n>', 'worker threads of the pool').argParser(positiveInteger))
    .option('--fault-interval <seconds>', 'seconds between two faults', positiveNumber, SOAK_DEFAULTS.faultIntervalSeconds)
    .addOption(
      new Option('--faults <list>', "faults to rotate through, comma-separated, in order ('' for none)")
        .argParser(parseFaultList)
        .default(undefined, `${ENGINE_FAULT_ROTATION.join(',')}; with --haproxy ${HAPROXY_FAULT_ROTATION.join(',')}`),
    )
    .option('--render-timeout <ms>', 'a render running longer fails and its worker is replaced (ends a hang)', positiveNumber, SOAK_DEFAULTS.renderTimeoutMs)
    .option('--worker-heap-mb <mb>', "each worker's old-generation heap limit (where an out-of-memory worker dies)", positiveInteger, SOAK_DEFAULTS.workerHeapMb)
    .option('--seed <n>', 'random seed of the cluster and the churn', (v) => Number.parseInt(v, 10), SOAK_DEFAULTS.seed)
    .option('--out-dir <dir>', 'where soak.json and soak.svg (soak-haproxy.json and .svg with --haproxy) are written', SOAK_DEFAULTS.outDir)
    .option('--haproxy', 'deploy to a real local HAProxy serving traffic to echo backends; adds the faults haproxy-worker and haproxy-master (SIGKILL)')
    .option('--traffic-rate <requests/s>', 'with --haproxy: requests per second through HAProxy', positiveNumber, SOAK_DEFAULTS.trafficRate)
    .option('--reload-interval <seconds>', 'with --haproxy: seconds between two Ingress edits that force a reload', positiveNumber, SOAK_DEFAULTS.reloadIntervalSeconds)
    .option('--max-old-workers <n>', 'with --haproxy: old HAProxy workers left draining after a reload', (v) => Number.parseInt(v, 10), SOAK_DEFAULTS.maxOldWorkers)
    .action(
      async (opts: {
        minutes: number;
        seconds?: number;
        ingresses: number;
        rate?: number;
        threads?: number;
        faultInterval: number;
        faults?: ReturnType<typeof parseFaultList>;
        renderTimeout: number;
        workerHeapMb: number;
        seed: number;
        outDir: string;
        haproxy?: boolean;
        trafficRate: number;
        reloadInterval: number;
        maxOldWorkers: number;
      }) => {
        const haproxy = opts.haproxy === true;
        // Ctrl-C ends the flood early; the report covers what ran.
        const interrupt = new AbortController();
        const onSigint = (): void => interrupt.abort();
        process.once('SIGINT', onSigint);
        try {
          process.exitCode = await runSoak(
            {
              durationSeconds: opts.seconds ?? opts.minutes * 60,
              ingresses: opts.ingresses,
              rate: opts.rate ?? (haproxy ? SOAK_DEFAULTS.haproxyRate : SOAK_DEFAULTS.rate),
              ...(opts.threads === undefined ? {} : { threads: opts.threads }),
              faultIntervalSeconds: opts.faultInterval,
              faults: opts.faults ?? [...(haproxy ? HAPROXY_FAULT_ROTATION : ENGINE_FAULT_ROTATION)],
              renderTimeoutMs: opts.renderTimeout,
              workerHeapMb: opts.workerHeapMb,
              seed: opts.seed,
              outDir: resolve(opts.outDir),
              ...(haproxy ? { haproxy: { trafficRate: opts.trafficRate, reloadIntervalSeconds: opts.reloadInterval, maxOldWorkers: opts.maxOldWorkers } } : {}),
            },
            { signal: interrupt.signal },
          );
        } finally {
          process.off('SIGINT', onSigint);
        }
      },
    );
}
