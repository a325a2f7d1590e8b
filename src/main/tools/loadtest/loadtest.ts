// `haptic-reconciler loadtest`: the synthetic event flood. The same seeded flood runs once per
// executor (InlinePipeline, then PoolPipeline), each in a fresh child process (child.ts) that
// measures its main thread; this parent probes the child's /healthz during the flood, adds those
// figures, judges the targets and writes the JSON report, the Markdown summary (always printed)
// and SVG charts of event-loop delay and memory over time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { eventLoopDelayChart, memoryChart } from './charts.js';
import { parseChildMessage, RELEASE_TIMEOUT_MS, WARMED } from './child-protocol.js';
import { FRESHNESS_TIMEOUT_MS, validateFloodOptions, type FloodOptions, type LoadtestMode } from './flood-options.js';
import { RSS_SETTLED_RULE } from './memory.js';
import { HealthProber } from './probes.js';
import { evaluateTargets, markdownSummary, type ChildReport, type LoadtestReport, type ModeReport } from './report.js';

export interface LoadtestOptions extends FloodOptions {
  readonly mode: LoadtestMode | 'both';
  readonly json?: string;
  readonly markdown?: string;
  readonly svg?: string;
  /** SVG chart of RSS and heap over time. */
  readonly rssSvg?: string;
}

/** How long a child may take to load the template set, populate its stores and start. */
const SETUP_TIMEOUT_MS = 180_000;

/** Runs each mode in its own child, one after the other; 1 when a mode dropped, failed or went stale. */
export async function runLoadtest(options: LoadtestOptions): Promise<number> {
  validateFloodOptions(options);
  const modes: LoadtestMode[] = options.mode === 'both' ? ['inline', 'pool'] : [options.mode];
  const flood: FloodOptions = {
    ingresses: options.ingresses,
    rate: options.rate,
    duration: options.duration,
    seed: options.seed,
    ...(options.threads === undefined ? {} : { threads: options.threads }),
  };
  const report: { -readonly [K in keyof LoadtestReport]: LoadtestReport[K] } = {
    options: flood,
    environment: { node: process.version, platform: `${process.platform}-${process.arch}`, cpus: availableParallelism() },
    rssSettledRule: RSS_SETTLED_RULE,
  };
  console.error(
    `loadtest: ${flood.ingresses} Ingresses, ${flood.rate} changes/s for ${flood.duration} s, seed ${flood.seed}; ` +
      `modes ${modes.join(', ')} (each in a fresh child process, one after the other)`,
  );
  for (const mode of modes) report[mode] = await runModeInChild(mode, flood);
  report.targets = evaluateTargets(report);

  const markdown = markdownSummary(report);
  console.log(markdown);
  if (options.json !== undefined) await writeFile(options.json, `${JSON.stringify(report, null, 2)}\n`);
  if (options.markdown !== undefined) await writeFile(options.markdown, markdown);
  if (options.svg !== undefined) await writeFile(options.svg, eventLoopDelayChart(report));
  if (options.rssSvg !== undefined) await writeFile(options.rssSvg, memoryChart(report));

  const problems = modes.flatMap((mode) => {
    const r = report[mode] as ModeReport;
    return [
      ...(r.criticalDrops > 0 ? [`${mode}: ${r.criticalDrops} critical bus drops`] : []),
      ...(r.failures > 0 ? [`${mode}: ${r.failures} failed reconciliations`] : []),
      ...(r.fresh ? [] : [`${mode}: the last change was not rendered within ${FRESHNESS_TIMEOUT_MS} ms`]),
    ];
  });
  for (const problem of problems) console.error(`loadtest: ${problem}`);
  return problems.length === 0 ? 0 : 1;
}

/** Runs one mode in a fresh child process and probes its /healthz during the flood. */
async function runModeInChild(mode: LoadtestMode, flood: FloodOptions): Promise<ModeReport> {
  const { cli, execArgv } = cliEntry();
  const args = [
    ...execArgv,
    cli,
    'loadtest',
    '--child',
    mode,
    '--ingresses',
    String(flood.ingresses),
    '--rate',
    String(flood.rate),
    '--duration',
    String(flood.duration),
    '--seed',
    String(flood.seed),
    ...(flood.threads === undefined ? [] : ['--threads', String(flood.threads)]),
  ];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.on('error', () => undefined); // the child may be gone already; its exit is reported
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  exited.catch(() => undefined); // a spawn error surfaces where `exited` is awaited
  const deadlineMs = SETUP_TIMEOUT_MS + flood.duration * 1000 + FRESHNESS_TIMEOUT_MS + RELEASE_TIMEOUT_MS;
  const killer = setTimeout(() => {
    console.error(`loadtest: ${mode} child ${child.pid} did not finish within ${Math.round(deadlineMs / 1000)} s; killing it`);
    child.kill('SIGKILL');
  }, deadlineMs);
  console.error(`loadtest: ${mode}: child process ${child.pid} started`);

  let prober: HealthProber | undefined;
  let result: ChildReport | undefined;
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const message = parseChildMessage(line);
      if (message === undefined) {
        if (line.trim() !== '') process.stderr.write(`[${mode} child] ${line}\n`);
        continue;
      }
      if (message.loadtest === 'listening') {
        const opened = new HealthProber(message.port, flood.duration);
        prober = opened;
        void opened.warm().then(() => child.stdin.write(`${WARMED}\n`));
      } else if (message.loadtest === 'flood-start') {
        prober?.start();
      } else if (message.loadtest === 'flood-end') {
        prober?.stop();
      } else {
        result = message.result;
        // Probes sent while the child was blocked are still in flight: wait for them (each is
        // bounded by its timeout), then let the child close its server and exit.
        prober?.stop();
        await prober?.drained();
        child.stdin.end();
      }
    }
    const [code, signal] = await exited;
    if (result === undefined) throw new Error(`loadtest: the ${mode} child exited (${signal ?? `code ${code}`}) without a result`);
    if (code !== 0) console.error(`loadtest: the ${mode} child exited with code ${code}`);
  } finally {
    clearTimeout(killer);
    prober?.close();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  const probes = prober?.stats ?? { p50Ms: 0, p99Ms: 0, completed: 0, errors: 0 };
  return { ...result, probeP50Ms: probes.p50Ms, probeP99Ms: probes.p99Ms, probes: probes.completed, probeErrors: probes.errors };
}

/** The CLI script and the Node flags a child needs: tsx's loader when running from source. */
function cliEntry(): { cli: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const cli = fileURLToPath(new URL(`../../cli/cli.${fromSource ? 'ts' : 'js'}`, import.meta.url));
  // A debugger port cannot be shared with the child.
  const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--inspect'));
  if (fromSource && !execArgv.some((arg) => arg.includes('tsx'))) execArgv.push('--import', 'tsx');
  return { cli, execArgv };
}
