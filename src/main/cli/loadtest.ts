// `haptic-reconciler loadtest`: the synthetic event flood, inline vs pool, each in a fresh child.
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { runLoadtestChild } from '../tools/loadtest/child.js';
import type { LoadtestMode } from '../tools/loadtest/flood-options.js';
import { runLoadtest } from '../tools/loadtest/loadtest.js';

export function registerLoadtest(program: Command): void {
  program
    .command('loadtest')
    .description('synthetic event flood: main-thread responsiveness with the inline executor vs the worker pool, each in a fresh child process')
    .option('--ingresses <n>', 'synthetic Ingresses (each with a Service and an EndpointSlice)', (v) => Number.parseInt(v, 10), 5000)
    .option('--rate <changes/s>', 'synthetic changes per second', (v) => Number.parseFloat(v), 5000)
    .option('--duration <seconds>', 'how long the flood lasts', (v) => Number.parseFloat(v), 10)
    .addOption(new Option('--mode <mode>', 'executor(s) to measure').choices(['inline', 'pool', 'both']).default('both'))
    .option('--seed <n>', 'random seed of the cluster and the flood', (v) => Number.parseInt(v, 10), 1)
    .option('--json <file>', 'write the JSON report here')
    .option('--markdown <file>', 'also write the Markdown summary here (it is always printed)')
    .option('--svg <file>', 'write an SVG chart of main event-loop delay over time here')
    .option('--rss-svg <file>', 'write an SVG chart of RSS and heap over time here (default with --svg: next to it, as <name>-rss.svg)')
    .addOption(new Option('--threads <n>', 'worker threads of the pool').argParser((v) => Number.parseInt(v, 10)))
    .addOption(new Option('--child <mode>', 'internal: run one mode in this process').choices(['inline', 'pool']).hideHelp())
    .action(
      async (opts: {
        ingresses: number;
        rate: number;
        duration: number;
        mode: LoadtestMode | 'both';
        seed: number;
        json?: string;
        markdown?: string;
        svg?: string;
        rssSvg?: string;
        threads?: number;
        child?: LoadtestMode;
      }) => {
        const { child, json, markdown, svg, rssSvg: rssSvgOption, ...flood } = opts;
        // By default the memory chart goes next to the event-loop delay chart: a.svg -> a-rss.svg.
        const rssSvg = rssSvgOption ?? (svg === undefined ? undefined : svg.replace(/(\.svg)?$/i, '-rss.svg'));
        process.exitCode =
          child === undefined
            ? await runLoadtest({
                ...flood,
                ...(json === undefined ? {} : { json: resolve(json) }),
                ...(markdown === undefined ? {} : { markdown: resolve(markdown) }),
                ...(svg === undefined ? {} : { svg: resolve(svg) }),
                ...(rssSvg === undefined ? {} : { rssSvg: resolve(rssSvg) }),
              })
            : await runLoadtestChild(child, flood);
      },
    );
}
