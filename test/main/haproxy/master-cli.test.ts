// MasterCli.reload against a scripted master socket and a FakeClock: a reload is proven by
// `show proc` (reload counter up, failure counter unchanged, a new worker pid), the silent close
// HAProxy answers `reload` with is expected, and polling is bounded by the injected clock.
import { describe, expect, it } from 'vitest';
import { MasterCli } from '../../../src/main/haproxy/master-cli.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { ScriptedTransport, cliError } from './scripted-transport.js';

function proc(reloads: number, failed: number, workers: number[]): string {
  const rows = workers.map((pid, i) => `${pid}           worker          ${i === 0 ? 0 : 1}               0d00h00m01s     2.6.12-1+deb12u4\n`).join('');
  return (
    '#<PID>          <type>          <reloads>       <uptime>        <version>      \n' +
    `100             master          ${reloads} [failed: ${failed}]   0d00h01m00s     2.6.12-1+deb12u4\n` +
    `# workers\n${rows}# programs\n\n`
  );
}

function setup(answers: ConstructorParameters<typeof ScriptedTransport>[0], fallback?: ConstructorParameters<typeof ScriptedTransport>[1]) {
  const clock = new FakeClock();
  const transport = new ScriptedTransport(answers, fallback);
  const cli = new MasterCli({ socketPath: transport.socketPath, clock, transport });
  return { clock, transport, cli };
}

describe('MasterCli', () => {
  it('ends each show proc session with quit, since the master CLI stays open otherwise', async () => {
    const { transport, cli } = setup([proc(0, 0, [101])]);
    expect((await cli.showProc()).workers.map((w) => w.pid)).toEqual([101]);
    expect(transport.requests).toEqual(['show proc; quit\n']);
  });

  it('reports a reload as done once the counter went up and a new worker appeared', async () => {
    const { clock, transport, cli } = setup([proc(0, 0, [101]), '', proc(0, 0, [101]), proc(1, 0, [101]), proc(1, 0, [202])]);
    const pending = cli.reload({ pollMs: 100 });
    await clock.advance(100);
    await clock.advance(100);
    const result = await pending;
    expect(result).toMatchObject({ ok: true, workerPid: 202, reloads: 1 });
    expect(result.durationMs).toBe(200);
    expect(transport.requests.filter((r) => r === 'reload\n')).toHaveLength(1);
  });

  it('takes the connection HAProxy closes or resets on reload, and refused polls while it re-executes, in its stride', async () => {
    const { clock, cli } = setup([proc(3, 0, [101]), cliError('closed'), cliError('connect'), proc(4, 0, [303])]);
    const pending = cli.reload({ pollMs: 50 });
    await clock.advance(50);
    expect(await pending).toMatchObject({ ok: true, workerPid: 303, reloads: 4 });
  });

  it('reports a failed reload, with the old worker still serving, when the failure counter goes up', async () => {
    const { cli } = setup([proc(1, 0, [101]), '', proc(2, 1, [101])]);
    const result = await cli.reload();
    expect(result).toMatchObject({ ok: false, workerPid: 101, reloads: 2 });
    expect(result.detail).toMatch(/refused the new configuration \(failed reloads: 1\); worker 101 keeps serving/);
  });

  it('gives up when no new worker appears within the timeout on the injected clock', async () => {
    const { clock, cli } = setup([proc(0, 0, [101]), ''], proc(1, 0, [101]));
    const pending = cli.reload({ timeoutMs: 1_000, pollMs: 100 });
    let settled = false;
    void pending.then(() => (settled = true));
    await clock.advance(900);
    expect(settled).toBe(false);
    await clock.advance(100);
    const result = await pending;
    expect(result).toMatchObject({ ok: false, workerPid: undefined });
    expect(result.detail).toMatch(/no new worker within 1000 ms .*reload counter 1, no new worker yet/);
  });

  it('fails without reloading when the master cannot be reached first', async () => {
    const { transport, cli } = setup([cliError('connect')]);
    expect(await cli.reload()).toMatchObject({ ok: false, detail: expect.stringMatching(/unreachable before the reload/) });
    expect(transport.requests).toEqual(['show proc; quit\n']);
  });

  it('reports a restarted master as a failed reload rather than a success', async () => {
    const { cli } = setup([proc(0, 0, [101]), '', proc(0, 0, [202]).replace(/^100 /m, '900 ')]);
    expect(await cli.reload()).toMatchObject({ ok: false, detail: expect.stringMatching(/master changed from pid 100 to 900/) });
  });

  it('runs overlapping reloads one after the other', async () => {
    const { transport, cli } = setup([proc(0, 0, [101]), '', proc(1, 0, [202]), proc(1, 0, [202]), '', proc(2, 0, [303])]);
    const [first, second] = await Promise.all([cli.reload(), cli.reload()]);
    expect([first.workerPid, second.workerPid]).toEqual([202, 303]);
    expect(transport.requests).toEqual(['show proc; quit\n', 'reload\n', 'show proc; quit\n', 'show proc; quit\n', 'reload\n', 'show proc; quit\n']);
  });
});
