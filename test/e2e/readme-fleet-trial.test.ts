// The README's fleet trial, run as written (ports and directories swapped for free and private
// ones): echo backends, three agents on 127.0.0.2-4 each with its own HAProxy, one controller
// deploying to all three, one request per address, then the endpoint edit, which must reach all
// three through the Runtime API without a reload. Keeps the README true for a newcomer.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startCli, type CliProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/e2e-client.js';
import { eventually } from '../helpers/eventually.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('readme-fleet-trial.test.ts');

const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

/** The lines of the first sh block under the "A fleet on one machine" heading. */
function trialLines(): string[] {
  const section = readme.split(/^## A fleet on one machine/m)[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').map((line) => line.replace(/#.*$/, '').trim()).filter((line) => line !== '');
}

const processes: CliProcess[] = [];
let dir: string | undefined;

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function metric(port: number, line: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? 0 : Number(found.split(' ').pop());
}

describe.skipIf(SKIP_HAPROXY)("the README's fleet trial", () => {
  it('serves the same route from three agents on three loopback addresses, and applies an endpoint edit on all three without a reload', async () => {
    const lines = trialLines();
    expect(lines).toHaveLength(5);
    const [backends, token, agents, run, curl] = lines as [string, string, string, string, string];
    dir = await mkdtemp(join(tmpdir(), 'readme-fleet-'));
    const [web, api, http, https, status, agentPort, metrics] = (await freePorts(7)) as [number, number, number, number, number, number, number];
    const swap = (line: string): string =>
      line
        .replaceAll('127.0.0.1:9001', `127.0.0.1:${web}`)
        .replaceAll('127.0.0.1:9002', `127.0.0.1:${api}`)
        .replaceAll(':5555', `:${agentPort}`)
        .replaceAll('httpPort=8080', `httpPort=${http}`)
        .replaceAll('httpsPort=8443', `httpsPort=${https}`)
        .replaceAll('statusPort=8404', `statusPort=${status}`)
        .replaceAll('out/', `${dir as string}/`)
        .replaceAll('examples/local', join(dir as string, 'manifests'))
        .replace(/\s*&$/, '');
    const args = (line: string): string[] => swap(line).split(/\s+/).slice(1);
    const manifest = await readFile(join(REPO_ROOT, 'examples', 'local', 'echo.yaml'), 'utf8');
    await mkdir(join(dir, 'manifests'));
    await writeFile(join(dir, 'manifests', 'echo.yaml'), manifest.replaceAll('9001', String(web)).replaceAll('9002', String(api)));

    expect(backends).toMatch(/^\.\/bin\/haptic-reconciler\.js backends /);
    processes.push(startCli(args(backends)));
    // `mkdir -p out && echo trial-token > out/agent-token`
    const tokenFile = /> (\S+)$/.exec(swap(token))?.[1] ?? '';
    expect(token).toMatch(/^mkdir -p out && echo trial-token > out\/agent-token$/);
    await writeFile(tokenFile, 'trial-token\n');
    // `for i in 2 3 4; do <agent command with $i> & done`
    const loop = /^for i in 2 3 4; do (\.\/bin\/haptic-reconciler\.js agent .*) & done$/.exec(agents)?.[1];
    expect(loop).toBeDefined();
    for (const i of ['2', '3', '4']) processes.push(startCli(args((loop as string).replaceAll('$i', i))));
    expect(run).toMatch(/^\.\/bin\/haptic-reconciler\.js run .*--agents 127\.0\.0\.2:5555,127\.0\.0\.3:5555,127\.0\.0\.4:5555 /);
    processes.push(startCli([...args(run), '--metrics-addr', `127.0.0.1:${metrics}`]));

    const host = /Host: ([^']+)'/.exec(curl)?.[1] ?? '';
    const path = /http:\/\/127\.0\.0\.\$i:8080(\S+)/.exec(curl)?.[1] ?? '';
    expect([host, path]).toEqual(['echo.localhost', '/api/hello']);
    const backendOn = async (address: string): Promise<string | undefined> => {
      const reply = await send({ address, port: http, host, path }).catch(() => undefined);
      const backend = reply?.status === 200 ? reply.headers['x-backend'] : undefined;
      return typeof backend === 'string' ? backend : undefined;
    };
    for (const address of ADDRESSES) {
      await eventually(async () => ((await backendOn(address)) === `127.0.0.1:${api}` ? true : undefined), `${address} routing the trial request`, 40_000, 100);
    }
    // One reload per agent is counted, each a moment after that agent's HAProxy answers.
    const reloadCount = (): Promise<number> => metric(metrics, /^haptic_deployments_total\{kind="reload",outcome="success"\}/);
    await eventually(async () => ((await reloadCount()) >= ADDRESSES.length ? true : undefined), 'a reload counted for every agent', 10_000);
    const reloads = await reloadCount();

    // The follow-up: the README's endpoint edit, applied at runtime by every agent.
    const copy = join(dir, 'manifests', 'echo.yaml');
    await writeFile(copy, (await readFile(copy, 'utf8')).replace(`port: ${api}, protocol`, `port: ${web}, protocol`));
    for (const address of ADDRESSES) {
      await eventually(async () => ((await backendOn(address)) === `127.0.0.1:${web}` ? true : undefined), `${address} following the endpoint edit`, 30_000, 100);
    }
    // HAProxy answers with the new backend a moment before the deployment is counted (its files are written first).
    await eventually(async () => ((await metric(metrics, /^haptic_deployments_total\{kind="runtime",outcome="success"\}/)) >= 1 ? true : undefined), 'the runtime deployment counted', 10_000);
    expect(await reloadCount()).toBe(reloads);
  }, 90_000);
});
