// A `run … --haproxy` controller started by a test: once serving, its metrics address and its
// HAProxy's master CLI; and the stop that also ends the HAProxy a SIGKILLed controller leaves.
import { join } from 'node:path';
import { MasterCli } from '../../src/main/haproxy/master-cli.js';
import type { CliProcess } from './cli-process.js';
import { eventually } from './eventually.js';

export interface ServingController {
  /** `127.0.0.1:PORT` of its metrics, health and readiness endpoints. */
  readonly metrics: string;
  /** The master CLI of the HAProxy it supervises under `out`. */
  readonly master: MasterCli;
}

/** Resolves once `controller` (with `--metrics-addr 127.0.0.1:0`) logged its metrics address and /readyz answers 200. */
export async function whenServing(controller: CliProcess, out: string): Promise<ServingController> {
  const metrics = await eventually(() => /"metrics":"(127\.0\.0\.1:\d+)"/.exec(controller.output())?.[1], 'the metrics address', 60_000);
  await eventually(async () => (await fetch(`http://${metrics}/readyz`)).status === 200, '/readyz once HAProxy serves the first config', 60_000);
  return { metrics, master: new MasterCli({ socketPath: join(out, 'run', 'master.sock') }) };
}

/** SIGKILLs the controller, then stops the HAProxy it leaves behind through its master socket. */
export async function killWithHaproxy(controller: CliProcess | undefined, master: MasterCli | undefined): Promise<void> {
  await controller?.stop('SIGKILL');
  await master?.showProc().then(({ master: m }) => process.kill(m.pid, 'SIGTERM')).catch(() => undefined);
}
