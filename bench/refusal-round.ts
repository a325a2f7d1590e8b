// The cost of one render gate refusal round (`tsx bench/refusal-round.ts [sizes...]`, default
// 1,000 Ingresses): on a one-thread PoolPipeline with the synthetic cluster, one Ingress's backend
// gets a line HAProxy 2.6 refuses (a PCRE2-only regex). Measured with real components: the first
// `haproxy -c` (refused), tracing its message to the Ingress (refusedObjects), the render without
// it (incremental, on the same worker), and the `haproxy -c` that passes it. Then the same
// refusal with no line to trace (as after a timeout): the bisection by namespace and by Ingress,
// each step a trial render and a real `haproxy -c`. Also the per-render cost of the origin index's
// section scan. Writes bench/results/refusal-round.json.
import { mkdir, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/main/core/logger.js';
import { resolveRefusal, type GateRender } from '../src/main/gate/refusal-resolver.js';
import { refusedObjects } from '../src/main/gate/refusal-origins.js';
import { haproxyRenderChecker } from '../src/main/gate/render-checker.js';
import { PoolPipeline } from '../src/main/pipeline/pool/pool-pipeline.js';
import { SYNTHETIC_CLUSTER_VALUES } from '../src/main/sources/synthetic/synthetic-cluster.js';
import { loadTemplateSet } from '../src/main/template-set/template-set.js';
import type { OutputPaths } from '../src/worker/protocol.js';
import { configSections } from '../src/worker/render/origin-index.js';
import { environment, median, populatedStores, printTable, sig, type Row } from './lib.js';

const sizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0);
const N = sizes.length > 0 ? sizes : [1_000];
const never = new AbortController().signal;
const BAD_LINE = '  http-request deny if { path -m reg [\\d-z] }';

const set = await loadTemplateSet(undefined, SYNTHETIC_CLUSTER_VALUES);
const directories: OutputPaths = {
  mapsDir: String(set.values.mapsDir ?? '/etc/haproxy/maps'),
  filesDir: String(set.values.filesDir ?? '/etc/haproxy/files'),
  certsDir: String(set.values.certsDir ?? '/etc/haproxy/certs'),
};
const haproxyCheck = haproxyRenderChecker({ directories });

/** The render with the refused line added to `backend`'s section, when the render holds it. */
function withBadLine(render: GateRender, backend: string): GateRender {
  const header = `\nbackend ${backend}\n`;
  const at = render.haproxyConfig.indexOf(header);
  if (at < 0) return render;
  const cut = at + header.length;
  return { ...render, haproxyConfig: `${render.haproxyConfig.slice(0, cut)}${BAD_LINE}\n${render.haproxyConfig.slice(cut)}` };
}

const rows: Row[] = [];
for (const n of N) {
  const { stores } = populatedStores(set, n);
  const pool = await PoolPipeline.create({ templateSet: set, threads: 1, renderTimeoutMs: 600_000, logger: silentLogger() });
  try {
    const first = await pool.execute(never, stores, 'reconcile');
    const baseline = { haproxyConfig: first.haproxyConfig, auxiliaryFiles: first.auxiliaryFiles };
    const origins = first.origins;
    if (origins === undefined) throw new Error('the render carries no origin index');
    // What every render pays for its index: the scan for section lines (the rest is one map of the backends).
    const scans: number[] = [];
    for (let i = 0; i < 21; i++) {
      const started = performance.now();
      configSections(first.haproxyConfig, origins.names);
      scans.push(performance.now() - started);
    }
    // An Ingress in the middle of the config.
    const victim = origins.sections.filter((s) => s.object >= 0)[Math.floor(origins.sections.length / 2)] ?? origins.sections.find((s) => s.object >= 0);
    if (victim === undefined) throw new Error('no backend section');
    const refused = withBadLine(first, victim.name);

    let t = performance.now();
    const verdict = await haproxyCheck(refused, never);
    const firstCheckMs = performance.now() - t;
    if (verdict.ok) throw new Error('HAProxy accepted the refused line');

    t = performance.now();
    const traced = refusedObjects(verdict.message, refused);
    const traceMs = performance.now() - t;
    if (traced.length !== 1) throw new Error(`expected one object, traced ${traced.length}`);
    const { object, reason } = traced[0] as (typeof traced)[number];

    t = performance.now();
    const again = await pool.execute(never, stores, 'reconcile', { baseline, exclusions: { objects: [{ ...object, reason }] } });
    const rerenderMs = performance.now() - t;
    t = performance.now();
    const recheck = await haproxyCheck(withBadLine(again, victim.name), never);
    const recheckMs = performance.now() - t;
    if (!recheck.ok) throw new Error(`the render without ${object.namespace}/${object.name} was refused: ${recheck.message}`);

    // The same refusal with nothing to trace: bisection, each trial a render and a real check.
    t = performance.now();
    const round = await resolveRefusal(
      {
        render: refused,
        message: 'haproxy -c did not finish within 30000 ms',
        timedOut: true,
        exclusions: { objects: [] },
        check: (render, signal) => haproxyCheck(withBadLine(render, victim.name), signal),
        rerender: (exclusions, signal) => pool.execute(signal, stores, 'admission', { baseline, exclusions }),
      },
      never,
    );
    const bisectMs = performance.now() - t;
    const found = round.exclusions.map((e) => `${e.namespace}/${e.name}`).join(' ');
    if (found !== `${object.namespace}/${object.name}`) throw new Error(`bisection found ${found || 'nothing'}`);
    rows.push({
      ingresses: n,
      namespaces: new Set(origins.objects.map((o) => o.namespace)).size,
      configBytes: first.haproxyConfig.length,
      indexSections: origins.sections.length,
      indexScanMs: sig(median(scans), 2),
      firstCheckMs: sig(firstCheckMs),
      traceMs: sig(traceMs, 2),
      rerenderMs: sig(rerenderMs),
      recheckMs: sig(recheckMs),
      roundMs: sig(traceMs + rerenderMs + recheckMs),
      bisectChecks: round.checks,
      bisectMs: sig(bisectMs),
    });
  } finally {
    await pool.destroy();
  }
}
printTable('one refusal round: trace + render without the object + haproxy -c; then bisection', rows);
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(new URL('./results/refusal-round.json', import.meta.url), `${JSON.stringify({ environment: environment(), rows }, null, 2)}\n`);
