// Runs the benchmark suites: every suite, or the ones named on the command line, in order.
// Each prints its tables and writes bench/results/<suite>.json.
//   tsx bench/run.ts                      all suites, N = 100, 1000, 10000
//   tsx bench/run.ts render dispatch      only these
//   tsx bench/run.ts --sizes 100,1000     other cluster sizes (also --sizes=...)
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadTemplateSet } from '../src/main/template-set/template-set.js';
import { SYNTHETIC_CLUSTER_VALUES } from '../src/main/sources/synthetic/synthetic-cluster.js';
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

function usage(): string {
  return `usage: tsx bench/run.ts [--sizes N,N,...] [${SUITES.map((s) => s.name).join(' | ')} ...]`;
}

function parseArgs(argv: readonly string[]): Args {
  const names: string[] = [];
  let sizes = DEFAULT_SIZES;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') {
      console.log(usage());
      process.exit(0);
    }
    if (arg === '--sizes' || arg.startsWith('--sizes=')) {
      const text = arg === '--sizes' ? argv[++i] : arg.slice('--sizes='.length);
      const parsed = (text ?? '').split(',').map((s) => Number(s.replaceAll('_', '').trim()));
      if (parsed.length === 0 || parsed.some((n) => !Number.isInteger(n) || n < 1)) throw new UsageError(`--sizes expects positive integers, got ${JSON.stringify(text)}`);
      sizes = [...parsed].sort((a, b) => a - b);
    } else if (arg.startsWith('-')) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      names.push(arg);
    }
  }
  const unknown = names.filter((name) => !SUITES.some((s) => s.name === name));
  if (unknown.length > 0) throw new UsageError(`unknown suite(s): ${unknown.join(', ')}`);
  const suites = names.length === 0 ? SUITES : SUITES.filter((s) => names.includes(s.name));
  return { suites, sizes };
}

class UsageError extends Error {}

async function main(): Promise<void> {
  let args: Args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${usage()}`);
    process.exitCode = 2;
    return;
  }
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
