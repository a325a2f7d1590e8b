// map-replace: one versioned replacement of a first-match map of N entries against a real HAProxy
// 2.6, as LocalHaproxyTarget sends it (replaceMap): the entries in `add map @<ver> <<` payload
// commands split below tune.bufsize, against the same entries one `add map @<ver> <k> <v>` line
// each (a client whose payload limit is 0, the wire form before payloads). Per form: wall time
// and the main thread's own time (main-thread-time.ts), median of the runs, taken alternately.
//   tsx bench/map-replace.ts [N ...]      default 20000; writes bench/results/map-replace.json
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { MapReplaceOp } from '../src/main/deploy/runtime-ops.js';
import { HaproxyProcess } from '../src/main/haproxy/haproxy-process.js';
import { replaceMap } from '../src/main/haproxy/map-replace.js';
import { RuntimeApi } from '../src/main/haproxy/runtime-api.js';
import { silentLogger } from '../src/main/core/logger.js';
import { MAIN_THREAD_TIME_SOURCE, mainThreadTimer } from './main-thread-time.js';
import { median, printTable, sig, writeReport, type Row } from './lib.js';

const RUNS = 7;

/** Entries shaped like host-prefix.map's: `<host>/<path>` to a backend name. */
function entries(n: number, generation: number): [string, string][] {
  return Array.from({ length: n }, (_, i) => [`app${i}.ns${i % 97}.example.com/api/v${generation}/`, `ing_ns${i % 97}_app${i}_svc${i}_8080`]);
}

async function measure(n: number): Promise<Row> {
  const dir = await mkdtemp(join(tmpdir(), 'haptic-map-replace-'));
  const map = join(dir, 'host-prefix.map');
  await writeFile(map, entries(n, 0).map(([k, v]) => `${k} ${v}\n`).join(''));
  const configFile = join(dir, 'haproxy.cfg');
  await writeFile(
    configFile,
    ['global', `  stats socket ${join(dir, 'run', 'admin.sock')} mode 600 level admin`, 'defaults', '  mode http', '  timeout client 5s', '  timeout server 5s', '  timeout connect 5s',
      'frontend http', `  bind unix@${join(dir, 'http.sock')}`, `  http-request return status 200 content-type text/plain lf-string "%[path,map_beg(${map},none)]"`, ''].join('\n'),
  );
  const haproxy = new HaproxyProcess({ configFile, runDir: join(dir, 'run'), stdout: 'ignore', logger: silentLogger() });
  await haproxy.start();
  try {
    const forms = { payload: haproxy.runtimeApi, lines: new RuntimeApi({ socketPath: haproxy.adminSocket, maxPayloadBytes: 0 }) };
    const wall: Record<keyof typeof forms, number[]> = { payload: [], lines: [] };
    const main: Record<keyof typeof forms, number[]> = { payload: [], lines: [] };
    let generation = 0;
    for (let run = 0; run < RUNS; run++) {
      for (const form of ['payload', 'lines'] as const) {
        const op: MapReplaceOp = { type: 'map-replace', file: map, entries: entries(n, ++generation) };
        const timer = mainThreadTimer();
        const started = performance.now();
        await replaceMap(forms[form], op);
        wall[form].push(performance.now() - started);
        main[form].push(timer());
        const shown = (await haproxy.runtimeApi.send(`show map ${map}`)).output.split('\n').length;
        if (shown !== n) throw new Error(`after the ${form} replacement the map holds ${shown} entries, not ${n}`);
      }
    }
    return {
      entries: n,
      payloadWallMs: sig(median(wall.payload)),
      payloadMainThreadMs: sig(median(main.payload)),
      linesWallMs: sig(median(wall.lines)),
      linesMainThreadMs: sig(median(main.lines)),
      wallSpeedup: sig(median(wall.lines) / median(wall.payload)),
      mainThreadSpeedup: sig(median(main.lines) / median(main.payload)),
    };
  } finally {
    await haproxy.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const sizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0);
const rows: Row[] = [];
for (const n of sizes.length > 0 ? sizes : [20_000]) rows.push(await measure(n));
printTable(`map replacement over the Runtime API, median of ${RUNS} (${MAIN_THREAD_TIME_SOURCE})`, rows);
const path = await writeReport({
  suite: 'map-replace',
  description: 'versioned map replacement over the Runtime API: payload commands vs one add map line per entry',
  timing: `by hand, median of ${RUNS} runs per form, forms alternated; main thread: ${MAIN_THREAD_TIME_SOURCE}`,
  parameters: { sizes: rows.map((r) => r.entries), runs: RUNS },
  results: rows,
  comparisons: rows.map((r) => ({ entries: r.entries, wallSpeedup: r.wallSpeedup, mainThreadSpeedup: r.mainThreadSpeedup })),
  notes: ["'lines' is the wire form before payload commands (its commit also goes on its own connection)."],
});
console.log(path);
