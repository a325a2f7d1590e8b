// `haptic-reconciler demo` (`npm start`): the example cluster plus synthetic churn.
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { runDemo } from '../tools/demo.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('the example cluster plus synthetic churn, through the real bus, Reconciler, Coordinator and pool')
    .option('--duration <seconds>', 'how long to run', (v) => Number.parseFloat(v), 20)
    .option('--rate <changes/s>', 'synthetic changes per second', (v) => Number.parseFloat(v), 200)
    .option('--ingresses <n>', 'synthetic Ingresses added to the example cluster', (v) => Number.parseInt(v, 10), 500)
    .option('--out <dir>', 'where the final config is written', 'out/demo')
    .option('--seed <n>', 'random seed for the churn', (v) => Number.parseInt(v, 10), 1)
    .action(async (opts: { duration: number; rate: number; ingresses: number; out: string; seed: number }) => {
      process.exitCode = await runDemo({ ...opts, out: resolve(opts.out) });
    });
}
