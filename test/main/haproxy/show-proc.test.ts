// `show proc` parsing, on text captured from HAProxy 2.6.12's master CLI (fresh start, after a
// reload, after a failed reload) and on the manual's example with old workers and programs.
import { describe, expect, it } from 'vitest';
import { parseShowProc, parseUptime } from '../../../src/main/haproxy/show-proc.js';

const FRESH =
  '#<PID>          <type>          <reloads>       <uptime>        <version>      \n' +
  '25632           master          0 [failed: 0]   0d00h00m01s     2.6.12-1+deb12u4\n' +
  '# workers\n' +
  '25635           worker          0               0d00h00m01s     2.6.12-1+deb12u4\n' +
  '# programs\n' +
  '\n';

const RELOADED =
  '#<PID>          <type>          <reloads>       <uptime>        <version>      \n' +
  '25632           master          1 [failed: 0]   0d00h00m33s     2.6.12-1+deb12u4\n' +
  '# workers\n' +
  '26279           worker          0               0d00h00m01s     2.6.12-1+deb12u4\n' +
  '# programs\n' +
  '\n';

const FAILED_RELOAD =
  '#<PID>          <type>          <reloads>       <uptime>        <version>      \n' +
  '25632           master          2 [failed: 1]   0d00h00m36s     2.6.12-1+deb12u4\n' +
  '# workers\n' +
  '26279           worker          1               0d00h00m04s     2.6.12-1+deb12u4\n' +
  '# programs\n' +
  '\n';

const MANUAL_EXAMPLE =
  '#<PID>          <type>          <reloads>       <uptime>        <version>\n' +
  '1162            master          5 [failed: 0]   0d00h02m07s     2.5-dev13\n' +
  '# workers\n' +
  '1271            worker          1               0d00h00m00s     2.5-dev13\n' +
  '# old workers\n' +
  '1233            worker          3               0d00h00m43s     2.0-dev3-6019f6-289\n' +
  '# programs\n' +
  '1244            foo             0               0d00h00m00s     -\n' +
  '1255            bar             0               0d00h00m00s     -\n';

describe('parseShowProc', () => {
  it('reads the master, its reload and failure counters, and the worker of a fresh start', () => {
    expect(parseShowProc(FRESH)).toEqual({
      master: { pid: 25632, reloads: 0, failedReloads: 0, uptimeSeconds: 1, version: '2.6.12-1+deb12u4' },
      workers: [{ pid: 25635, reloads: 0, uptimeSeconds: 1, version: '2.6.12-1+deb12u4' }],
      oldWorkers: [],
      programs: [],
    });
  });

  it('shows a reload as a higher master counter and a new worker pid', () => {
    const before = parseShowProc(FRESH);
    const after = parseShowProc(RELOADED);
    expect(after.master.reloads).toBe(before.master.reloads + 1);
    expect(after.workers.map((w) => w.pid)).toEqual([26279]);
  });

  it('shows a failed reload as a higher failure counter while the old worker survives it', () => {
    const snapshot = parseShowProc(FAILED_RELOAD);
    expect(snapshot.master).toMatchObject({ reloads: 2, failedReloads: 1 });
    expect(snapshot.workers).toEqual([{ pid: 26279, reloads: 1, uptimeSeconds: 4, version: '2.6.12-1+deb12u4' }]);
  });

  it('separates current workers, old workers still draining, and programs', () => {
    const snapshot = parseShowProc(MANUAL_EXAMPLE);
    expect(snapshot.master).toMatchObject({ pid: 1162, reloads: 5, failedReloads: 0, uptimeSeconds: 127 });
    expect(snapshot.workers.map((w) => w.pid)).toEqual([1271]);
    expect(snapshot.oldWorkers).toEqual([{ pid: 1233, reloads: 3, uptimeSeconds: 43, version: '2.0-dev3-6019f6-289' }]);
    expect(snapshot.programs.map((p) => [p.name, p.pid, p.version])).toEqual([
      ['foo', 1244, '-'],
      ['bar', 1255, '-'],
    ]);
  });

  it('rejects a reply that is not a process table, naming the line', () => {
    expect(() => parseShowProc('Unknown command, but maybe one of the following ones is a better match:\n', '/run/m.sock')).toThrow(
      expect.objectContaining({ code: 'HAPROXY_CLI_FAILED', reason: 'protocol', message: expect.stringContaining('Unknown command') }),
    );
    expect(() => parseShowProc('# workers\n')).toThrow(/named no master/);
  });

  it('reads uptimes with days, and leaves an unknown format as NaN', () => {
    expect(parseUptime('2d03h04m05s')).toBe(2 * 86400 + 3 * 3600 + 4 * 60 + 5);
    expect(parseUptime('soon')).toBeNaN();
  });
});
