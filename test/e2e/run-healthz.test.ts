// `run --haproxy` /healthz end to end: 200 while HAProxy serves; 503, naming HAProxy, once it has
// not run for --haproxy-down-limit because every restart fails (here a wrapper around the real
// binary refuses to start while a flag file exists); 200 again once a restart succeeds. The
// supervisor never gives up: the controller recovers on its own when the cause goes away.
import { chmod, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { haproxyBinary } from '../../src/main/haproxy/haproxy-check.js';
import type { MasterCli } from '../../src/main/haproxy/master-cli.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';
import { killWithHaproxy, whenServing } from '../helpers/run-haproxy.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/run-healthz.test.ts');

let dir: string;
let flag: string;
let controller: CliProcess;
let master: MasterCli;
let metrics: string;

const healthz = async (): Promise<{ status: number; body: string }> => {
  const response = await fetch(`http://${metrics}/healthz`);
  return { status: response.status, body: await response.text() };
};

describe.skipIf(SKIP_HAPROXY)('run --haproxy /healthz', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-healthz-'));
    flag = join(dir, 'refuse-to-start');
    const wrapper = join(dir, 'haproxy');
    await writeFile(wrapper, `#!/bin/sh\nif [ -e '${flag}' ]; then echo '[ALERT] (0) : refused to start by the test' >&2; exit 1; fi\nexec '${haproxyBinary()}' "$@"\n`);
    await chmod(wrapper, 0o755);
    const [httpPort, httpsPort, statusPort] = (await freePorts(3)) as [number, number, number];
    const out = join(dir, 'out');
    controller = startCli(
      [
        'run', '--manifests', EXAMPLES_DIR, '--out', out, '--haproxy', '--metrics-addr', '127.0.0.1:0', '--threads', '1', '--haproxy-down-limit', '1000',
        '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${httpPort}`, '--set', `httpsPort=${httpsPort}`, '--set', `statusPort=${statusPort}`,
      ],
      { HAPROXY_BIN: wrapper },
    );
    ({ metrics, master } = await whenServing(controller, out));
  }, 90_000);

  afterAll(async () => {
    await killWithHaproxy(controller, master);
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 200 while HAProxy serves', async () => {
    expect(await healthz()).toEqual({ status: 200, body: 'ok\n' });
  });

  it('answers 503 naming HAProxy once every restart has failed for longer than the limit', async () => {
    const proc = await master.showProc();
    await writeFile(flag, '');
    process.kill(proc.master.pid, 'SIGKILL');
    for (const worker of proc.workers) process.kill(worker.pid, 'SIGKILL');
    const down = await eventually(async () => {
      const reply = await healthz();
      return reply.status === 503 ? reply : undefined;
    }, '/healthz 503', 20_000, 100);
    expect(JSON.parse(down.body)).toEqual({ alive: false, stopped: { haproxy: expect.stringMatching(/^HAProxy has not run for \d+ s: every restart failed$/) } });
  }, 30_000);

  it('answers 200 again once a restart succeeds', async () => {
    await unlink(flag);
    await eventually(async () => (await healthz()).status === 200, '/healthz 200 again', 30_000, 100);
  }, 40_000);

  it('exits 0 on SIGTERM', async () => {
    expect((await controller.stop('SIGTERM')).code).toBe(0);
  });
});
