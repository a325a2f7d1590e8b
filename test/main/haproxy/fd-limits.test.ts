// The descriptor formula against the numbers HAProxy 2.6.12 printed on this project's 20,000-fd
// host ("Cannot raise FD limit to N" with maxconn 10000, 3 binds, 2 threads; `show info` Maxconn
// without one), and the maxconn check that stops a config HAProxy would refuse to run.
import { describe, expect, it } from 'vitest';
import {
  checkConfigFits,
  checkMaxconnFits,
  descriptorsNeeded,
  derivedMaxconn,
  fdSettingsOfConfig,
  fdShapeOfConfig,
  parseProcLimits,
  usableDescriptors,
  type FdShape,
} from '../../../src/main/haproxy/fd-limits.js';

const shape = (statsSockets: number, masterWorker: boolean, threads = 2, checkSockets = 0): FdShape => ({ listeners: 3, statsSockets, checkSockets, threads, masterWorker });
const HOST = { soft: 20_000, hard: 20_000 };

describe('descriptorsNeeded', () => {
  it.each([
    ['plain, no stats socket', shape(0, false), 20_019],
    ['plain, one stats socket', shape(1, false), 20_030],
    ['master-worker, no stats socket', shape(0, true), 20_041],
    ['master-worker, one stats socket', shape(1, true), 20_042],
    ['master-worker, two stats sockets', shape(2, true), 20_043],
    ['master-worker, one thread', shape(0, true, 1), 20_038],
    ['master-worker, one thread, one stats socket', shape(1, true, 1), 20_039],
    ['master-worker, 40 servers under default-server check', shape(0, true, 2, 40), 20_081],
  ])('matches what HAProxy 2.6.12 asked for with maxconn 10000 (%s)', (_name, s, measured) => {
    expect(descriptorsNeeded(10_000, s)).toBe(measured);
  });
});

describe('derivedMaxconn', () => {
  it('matches the maxconn HAProxy derived at 20,000 and 1,024 descriptors', () => {
    expect(derivedMaxconn(HOST, shape(1, true))).toBe(9_979);
    expect(derivedMaxconn({ soft: 1_024, hard: 1_024 }, shape(1, true))).toBe(491);
  });

  it('is capped by fd-hard-limit on a host with a huge limit, and never below 100', () => {
    expect(derivedMaxconn({ soft: 1_048_576, hard: 1_048_576 }, shape(1, true), 65_536)).toBe(32_747);
    expect(usableDescriptors({ soft: 1_024, hard: Number.POSITIVE_INFINITY }, 65_536)).toBe(65_536);
    expect(derivedMaxconn({ soft: 64, hard: 64 }, shape(1, true))).toBe(100);
  });
});

describe('checkMaxconnFits', () => {
  const values = { runtimeSocket: '/out/run/admin.sock' };
  const twoThreads = shape(1, true);

  it('lets an unset maxconn through: HAProxy derives one that fits', () => {
    expect(checkMaxconnFits(values, HOST, twoThreads)).toBeUndefined();
    expect(checkMaxconnFits({ ...values, maxconn: '' }, HOST, twoThreads)).toBeUndefined();
  });

  it('accepts the largest maxconn that fits and refuses one more with the numbers and the way out', () => {
    expect(checkMaxconnFits({ ...values, maxconn: 9_979 }, HOST, twoThreads)).toBe(20_000);
    let thrown: unknown;
    try {
      checkMaxconnFits({ ...values, maxconn: 9_980 }, HOST, twoThreads);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ name: 'FdLimitError', code: 'FD_LIMIT_EXCEEDED', terminal: true, maxconn: 9_980, needed: 20_002, limit: 20_000 });
    expect((thrown as Error).message).toBe(
      'maxconn 9980 needs 20002 file descriptors (2 x 9980 + 42 for listeners, CLI sockets, checks and 2 threads), but HAProxy may open at most 20000 ' +
        '(the hard RLIMIT_NOFILE of 20000 (ulimit -Hn)), so it would refuse to start with "Cannot raise FD limit". ' +
        'Set maxconn to at most 9979, leave it unset so HAProxy derives one that fits, or raise the limit.',
    );
  });

  it('refuses the old default maxconn 10000 on a 20,000-descriptor host', () => {
    expect(() => checkMaxconnFits({ ...values, maxconn: 10_000 }, HOST, twoThreads)).toThrow(/maxconn 10000 needs 20042 file descriptors/);
  });

  it('names fd-hard-limit when it, not the host, is the bound', () => {
    expect(() => checkMaxconnFits({ ...values, maxconn: 40_000, fdHardLimit: 65_536 }, { soft: 1e6, hard: 1e6 }, twoThreads)).toThrow(/at most 65536 \(fd-hard-limit 65536\)/);
  });

  it('takes --set strings and rejects a maxconn that is not a positive integer, showing it', () => {
    expect(checkMaxconnFits({ ...values, maxconn: '5000' }, HOST, twoThreads)).toBe(10_042);
    expect(() => checkMaxconnFits({ maxconn: 'lots' }, HOST)).toThrow(new TypeError('values.maxconn must be a positive integer, got "lots"'));
    expect(() => checkMaxconnFits({ maxconn: -5 }, HOST)).toThrow(TypeError);
  });
});

describe('reading limits and configs', () => {
  it('parses /proc/self/limits, unlimited included', () => {
    const text = 'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            20000                20000                files     \n';
    expect(parseProcLimits(text)).toEqual({ soft: 20_000, hard: 20_000 });
    expect(parseProcLimits(text.replace('20000                files', 'unlimited            files'))).toEqual({ soft: 20_000, hard: Number.POSITIVE_INFINITY });
    expect(parseProcLimits('nothing here')).toBeUndefined();
  });

  it('reads maxconn, fd-hard-limit, nbthread, binds and stats sockets from a rendered config', () => {
    const config = [
      'global',
      '  log stdout format raw local0',
      '  maxconn 10000',
      '  fd-hard-limit 65536',
      '  nbthread 2',
      '  stats socket /out/run/admin.sock mode 600 level admin expose-fd listeners',
      '',
      'defaults',
      '  maxconn 50 # per proxy, not global',
      'frontend status',
      '  bind 127.0.0.1:8404',
      'frontend http',
      '  bind 127.0.0.1:80',
      'frontend https',
      '  bind 127.0.0.1:443 ssl crt-list /out/files/crt-list.txt',
      '',
    ].join('\n');
    expect(fdSettingsOfConfig(config)).toEqual({ maxconn: 10_000, fdHardLimit: 65_536, threads: 2, listeners: 3, statsSockets: 1, checkSockets: 0 });
    expect(() => checkConfigFits(config, HOST)).toThrow(/needs 20042 file descriptors/);
    expect(checkConfigFits(config.replace('maxconn 10000', 'maxconn 9979'), HOST)).toBe(20_000);
    expect(checkConfigFits(config.replace('  maxconn 10000\n', ''), HOST)).toBeUndefined();
  });

  it('counts one socket per checked server, with default-server inheritance, no-check, agent checks and templates', () => {
    const config = [
      'defaults',
      '  mode http',
      '  default-server check',
      'backend a',
      '  server s1 10.0.0.1:80',
      '  server s2 10.0.0.2:80 disabled',
      '  server s3 10.0.0.3:80 no-check',
      'backend b',
      '  default-server no-check',
      '  server s1 10.0.0.1:80',
      '  server s2 10.0.0.2:80 check agent-check agent-port 9999',
      '  server-template web 1-5 10.0.0.9:80 check',
      'defaults',
      '  mode http',
      'backend c',
      '  server s1 10.0.0.1:80',
      '',
    ].join('\n');
    // a: s1, s2 (disabled servers are counted too); b: s2 check + agent + agent-port, 5 templated.
    expect(fdSettingsOfConfig(config).checkSockets).toBe(2 + 3 + 5);
    expect(fdShapeOfConfig(config)).toMatchObject({ listeners: 0, statsSockets: 0, checkSockets: 10, masterWorker: true });
  });
});
