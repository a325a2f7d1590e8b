// `haptic-reconciler soak` (`npm run soak -- --minutes M`): the synthetic flood with periodic
// faults; memory, event-loop delay, renders, failures and recoveries as JSON and an SVG chart.
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { FAULT_KINDS, parseFaultList, SOAK_DEFAULTS } from '../tools/soak/soak-options.js';
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
    .option('--rate <changes/s>', 'synthetic changes per second', positiveNumber, SOAK_DEFAULTS.rate)
    .addOption(new Option('--threads <n>', 'worker threads of the pool').argParser(positiveInteger))
    .option('--fault-interval <seconds>', 'seconds between two faults', positiveNumber, SOAK_DEFAULTS.faultIntervalSeconds)
    .addOption(
      new Option('--faults <list>', "faults to rotate through, comma-separated, in order ('' for none)")
        .argParser(parseFaultList)
        .default([...FAULT_KINDS], FAULT_KINDS.join(',')),
    )
    .option('--render-timeout <ms>', 'a render running longer fails and its worker is replaced (ends a hang)', positiveNumber, SOAK_DEFAULTS.renderTimeoutMs)
    .option('--worker-heap-mb <mb>', "each worker's old-generation heap limit (where an out-of-memory worker dies)", positiveInteger, SOAK_DEFAULTS.workerHeapMb)
    .option('--seed <n>', 'random seed of the cluster and the churn', (v) => Number.parseInt(v, 10), SOAK_DEFAULTS.seed)
    .option('--out-dir <dir>', 'where soak.json and soak.svg are written', SOAK_DEFAULTS.outDir)
    .action(
      async (opts: {
        minutes: number;
        seconds?: number;
        ingresses: number;
        rate: number;
        threads?: number;
        faultInterval: number;
        faults: ReturnType<typeof parseFaultList>;
        renderTimeout: number;
        workerHeapMb: number;
        seed: number;
        outDir: string;
      }) => {
        // Ctrl-C ends the flood early; the report covers what ran.
        const interrupt = new AbortController();
        const onSigint = (): void => interrupt.abort();
        process.once('SIGINT', onSigint);
        try {
          process.exitCode = await runSoak(
            {
              durationSeconds: opts.seconds ?? opts.minutes * 60,
              ingresses: opts.ingresses,
              rate: opts.rate,
              ...(opts.threads === undefined ? {} : { threads: opts.threads }),
              faultIntervalSeconds: opts.faultInterval,
              faults: opts.faults,
              renderTimeoutMs: opts.renderTimeout,
              workerHeapMb: opts.workerHeapMb,
              seed: opts.seed,
              outDir: resolve(opts.outDir),
            },
            { signal: interrupt.signal },
          );
        } finally {
          process.off('SIGINT', onSigint);
        }
      },
    );
}
