// HaproxyLog: HAProxy's stderr as log records: levels from its prefixes, control characters
// escaped, lines bounded, a rate limit per window on a FakeClock, and the alerts kept for errors.
import { describe, expect, it } from 'vitest';
import { HaproxyLog, escapeControl } from '../../../src/main/haproxy/haproxy-log.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { spyLogger } from '../../helpers/loggers.js';

function setup(options: { maxLinesPerWindow?: number; maxLineLength?: number } = {}) {
  const spy = spyLogger();
  const clock = new FakeClock();
  const log = new HaproxyLog({ logger: spy.logger, clock, windowMs: 1_000, ...options });
  return { spy, clock, log };
}

describe('HaproxyLog', () => {
  it('logs ALERT as error, WARNING as warn and NOTICE as info, across chunk boundaries', () => {
    const { spy, log } = setup();
    log.write('[NOTICE]   (10) : New worker (11) forked\n[WARN');
    log.write('ING]  (10) : Former worker (9) exited\n[ALERT]    (10) : Binding [x.cfg:15] for frontend status: cannot bind socket\n');
    expect(spy.info).toHaveBeenCalledWith({ source: 'haproxy', haproxyPid: 10 }, 'New worker (11) forked');
    expect(spy.warn).toHaveBeenCalledWith({ source: 'haproxy', haproxyPid: 10 }, 'Former worker (9) exited');
    expect(spy.error).toHaveBeenCalledWith({ source: 'haproxy', haproxyPid: 10 }, 'Binding [x.cfg:15] for frontend status: cannot bind socket');
  });

  it('keeps the alerts that came after a mark, for the error of a failed start or reload', () => {
    const { log } = setup();
    log.write('[ALERT] (1) : old trouble\n');
    const mark = log.mark();
    log.write('[WARNING] (1) : not an alert\n[ALERT] (1) : cannot bind socket (Address already in use)\n');
    expect(log.alertsSince(mark)).toEqual(['cannot bind socket (Address already in use)']);
  });

  it('escapes control characters so one HAProxy line stays one log line', () => {
    const { spy, log } = setup();
    log.write('[ALERT] (1) : bad \u001b[31mred\u001b[0m \u2028 value\r\n');
    expect(spy.error).toHaveBeenCalledWith(expect.anything(), 'bad \\x1b[31mred\\x1b[0m \\u2028 value');
    expect(escapeControl('tab\tstays')).toBe('tab\tstays');
  });

  it('cuts an endless line to the bound instead of buffering it', () => {
    const { spy, log } = setup({ maxLineLength: 100 });
    for (let i = 0; i < 50; i++) log.write('x'.repeat(1_000));
    log.write('\n');
    expect(spy.warn).toHaveBeenCalledTimes(1);
    expect(spy.warn.mock.calls[0]?.[1]).toBe(`${'x'.repeat(100)}…`);
  });

  it('logs at most maxLinesPerWindow lines per window and reports how many it dropped', async () => {
    const { spy, clock, log } = setup({ maxLinesPerWindow: 3 });
    for (let i = 0; i < 10; i++) log.write(`[NOTICE] (1) : line ${i}\n`);
    expect(spy.info).toHaveBeenCalledTimes(3);
    await clock.advance(1_000);
    log.write('[NOTICE] (1) : next window\n');
    expect(spy.warn).toHaveBeenCalledWith({ source: 'haproxy', suppressed: 7 }, '7 HAProxy log lines suppressed');
    expect(spy.info).toHaveBeenLastCalledWith(expect.anything(), 'next window');
  });

  it('logs the per-proxy lines every reload prints at debug, not as warnings', () => {
    const { spy, log } = setup();
    log.write('[WARNING]  (12) : Proxy ing_shop_web_80 stopped (cumulated conns: FE: 0, BE: 0).\n');
    expect(spy.warn).not.toHaveBeenCalled();
    expect(spy.debug).toHaveBeenCalledWith(expect.anything(), 'Proxy ing_shop_web_80 stopped (cumulated conns: FE: 0, BE: 0).');
  });

  it('logs an unterminated last line on flush', () => {
    const { spy, log } = setup();
    log.write('[ALERT] (1) : no newline');
    expect(spy.error).not.toHaveBeenCalled();
    log.flush();
    expect(spy.error).toHaveBeenCalledWith(expect.anything(), 'no newline');
  });
});
