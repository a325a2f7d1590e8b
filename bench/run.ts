// Runs the benchmark suites: every suite, or the ones named on the command line, in order.
// Each prints its tables and writes bench/results/<suite>.json.
//   tsx bench/run.ts                      all suites, N = 100, 1000, 10000
//   tsx bench/run.ts render dispatch      only these
//   tsx bench/run.ts --sizes 100,1000     other cluster sizes (also --sizes=...)
//   tsx bench/run.ts --help               usage
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadTemplateSet } from '../src/main/template-set/template-set.js';
import { SYNTHETIC_CLUSTER_VALUES } from '../src/main/sources/synthetic/synthetic-cluster.js';
import { benchCommand, sizeList } from './bench-command.js';
import { DEFAULT_SIZES, printTable, writeReport, type Suite } from './lib.js';
import { busSuite } from './suites/bus.js';
import { deploySuite } from './suites/deploy.js';
import { dispatchSuite } from './suites/dispatch.js';
import { mailboxSuite } from './suites/mailbox.js';
import { renderSuite } from './suites/render.js';
import { storesSuite } from './suites/stores.js';
import { webhookSuite } from './suites/webhook.js';

const SUITES: readonly Suite[] = [busSuite, mailboxSuite, storesSuite, renderSuite, dispatchSuite, deploySuite, webhookSuite];

interface Args {
  readonly suites: readonly Suite[];
  readonly sizes: readonly number[];
}

function parseArgs(argv: readonly string[]): Args {
  const names = SUITES.map((s) => s.name);
  const command = benchCommand('bench', 'runs the benchmark suites, every one or those named, and writes bench/results/<suite>.json')
    .argument('[suites...]', `suites to run, in order (default all): ${names.join(', ')}`)
    .option('--sizes <N,N,...>', `cluster sizes (default ${DEFAULT_SIZES.join(',')})`, sizeList)
    .parse(argv, { from: 'user' });
  const chosen = command.processedArgs[0] as string[];
  const unknown = chosen.filter((name) => !names.includes(name));
  if (unknown.length > 0) command.error(`error: unknown suite(s): ${unknown.join(', ')}`);
  const sizes = (command.opts() as { sizes?: number[] }).sizes ?? DEFAULT_SIZES;
  return { suites: chosen.length === 0 ? SUITES : SUITES.filter((s) => chosen.includes(s.name)), sizes };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const templateSet = await loadTemplateSet(undefined, SYNTHETIC_CLUSTER_VALUES);
  const started = performance.now();
  console.log(`benchmarks: ${args.suites.map((s) => s.name).join(', ')}; N = ${args.sizes.join(', ')}`);
  console.log(`node ${process.version}, ${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const suite of args.suites) {
    const t0 = performance.now();
    console.log(`\n=== ${suite.name}: ${suite.description}`);
    const report = await suite.run({ sizes: args.sizes, templateSet });
    printTable(`${suite.name}: results`, report.results);
    printTable(`${suite.name}: side by side`, report.comparisons);
    for (const note of report.notes) console.log(`  - ${note}`);
    const file = await writeReport(report);
    console.log(`  ${suite.name} took ${((performance.now() - t0) / 1000).toFixed(1)} s; wrote ${file}`);
  }
  console.log(`\nall done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

await main();
