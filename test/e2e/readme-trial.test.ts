// The README's three-command trial, run as written (ports and the output directory swapped for
// free ones): echo backends, `run --haproxy` on examples/local, and a request that HAProxy routes
// to the backend the path names. Keeps the README true for a newcomer.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startCli, type CliProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/e2e-client.js';
import { eventually } from '../helpers/eventually.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('readme-trial.test.ts');

const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');

/** The three lines of the first sh block under the "Try it" heading. */
async function trialCommands(): Promise<string[]> {
  const section = readme.split(/^## Try it/m)[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').map((line) => line.replace(/#.*$/, '').trim()).filter((line) => line !== '');
}

const processes: CliProcess[] = [];
let dir: string | undefined;

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(SKIP_HAPROXY)("the README's three-command trial", () => {
  it('routes a real request through HAProxy to the echo backend its path names, then applies an endpoint edit at runtime without a reload', async () => {
    const commands = await trialCommands();
    expect(commands).toHaveLength(3);
    dir = await mkdtemp(join(tmpdir(), 'readme-trial-'));
    const [web, api, http, https, status, metrics] = await freePorts(6);
    const swap = (line: string): string =>
      line
        .replaceAll('127.0.0.1:9001', `127.0.0.1:${web}`)
        .replaceAll('127.0.0.1:9002', `127.0.0.1:${api}`)
        .replaceAll('httpPort=8080', `httpPort=${http}`)
        .replaceAll('httpsPort=8443', `httpsPort=${https}`)
        .replaceAll('statusPort=8404', `statusPort=${status}`)
        .replaceAll('out/local', join(dir as string, 'out'))
        .replaceAll('examples/local', join(dir as string, 'manifests'))
        .replace(/\s*&$/, '');
    // The manifests name the backends' ports: the same copy with the swapped ones.
    const manifest = await readFile(join(REPO_ROOT, 'examples', 'local', 'echo.yaml'), 'utf8');
    await mkdir(join(dir, 'manifests'));
    await writeFile(join(dir, 'manifests', 'echo.yaml'), manifest.replaceAll('9001', String(web)).replaceAll('9002', String(api)));
    const args = (line: string): string[] => swap(line).split(/\s+/).slice(1);
    const [backends, run, curl] = commands as [string, string, string];
    expect(backends).toMatch(/^\.\/bin\/haptic-reconciler\.js backends /);
    expect(run).toMatch(/^\.\/bin\/haptic-reconciler\.js run /);
    processes.push(startCli(args(backends)));
    processes.push(startCli([...args(run), '--metrics-addr', `127.0.0.1:${metrics}`]));
    const url = /(http:\/\/\S+)/.exec(curl)?.[1] ?? '';
    const host = /Host: ([^']+)'/.exec(curl)?.[1] ?? '';
    expect(url).toBe('http://127.0.0.1:8080/api/hello');
    const reply = await eventually(async () => {
      const r = await send({ port: http as number, host, path: new URL(url).pathname }).catch(() => undefined);
      return r?.status === 200 ? r : undefined;
    }, 'HAProxy answering 200 for the trial request', 30_000, 100);
    expect(reply.headers['x-backend']).toBe(`127.0.0.1:${api}`);
    expect(JSON.parse(reply.body)).toMatchObject({ url: '/api/hello', headers: { host: 'echo.localhost', 'x-forwarded-proto': 'http' } });

    // The follow-up: the endpoint edit the README shows, applied at runtime with no reload.
    const edit = /```sh\n(sed [^\n]*)\n/.exec(readme)?.[1] ?? '';
    const [, from, to] = /s\/port: (\d+), protocol\/port: (\d+), protocol\//.exec(edit) ?? [];
    expect([from, to]).toEqual(['9002', '9001']);
    const copy = join(dir, 'manifests', 'echo.yaml');
    await writeFile(copy, (await readFile(copy, 'utf8')).replace(`port: ${api}, protocol`, `port: ${web}, protocol`));
    await eventually(async () => {
      const r = await send({ port: http as number, host, path: '/api/hello' }).catch(() => undefined);
      return r?.headers['x-backend'] === `127.0.0.1:${web}` ? r : undefined;
    }, 'the api path answered by the other backend', 30_000, 100);
    // HAProxy answers with the new backend a moment before the deployment is counted (its files are written first).
    const text = await eventually(async () => {
      const body = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      return body.includes('haptic_deployments_total{kind="runtime",outcome="success"} 1') ? body : undefined;
    }, 'the runtime deployment counted', 10_000);
    expect(text).toContain('haptic_deployments_total{kind="runtime",outcome="success"} 1');
    expect(text).toContain('haptic_deployments_total{kind="reload",outcome="success"} 1');
  }, 60_000);
});
