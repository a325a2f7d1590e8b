// HaproxyDowntime, the /healthz view of the local HAProxy: alive while HAProxy runs, is not yet
// started, or recovers within the limit; not alive once it has been restarting, every restart
// failing, for longer than the limit. A successful restart starts the count afresh.
import { describe, expect, it } from 'vitest';
import { HaproxyDowntime } from '../../../src/main/haproxy/haproxy-downtime.js';
import type { HaproxyState } from '../../../src/main/haproxy/haproxy-process.js';
import { FakeClock } from '../../helpers/fake-clock.js';

function setup(limitMs = 60_000): { downtime: HaproxyDowntime; clock: FakeClock; haproxy: { state: HaproxyState } } {
  const clock = new FakeClock();
  const haproxy: { state: HaproxyState } = { state: 'stopped' };
  return { downtime: new HaproxyDowntime({ haproxy, clock, limitMs }), clock, haproxy };
}

describe('HaproxyDowntime', () => {
  it('sees no problem before the first start, nor while HAProxy runs', async () => {
    const { downtime, clock, haproxy } = setup();
    expect(downtime.problem()).toBeUndefined();
    haproxy.state = 'running';
    await clock.advance(3_600_000);
    expect(downtime.problem()).toBeUndefined();
  });

  it('names the problem once HAProxy has been restarting for longer than the limit', async () => {
    const { downtime, clock, haproxy } = setup();
    haproxy.state = 'restarting';
    downtime.restarting();
    await clock.advance(60_000);
    expect(downtime.problem()).toBeUndefined();
    await clock.advance(1_000);
    expect(downtime.problem()).toBe('HAProxy has not run for 61 s: every restart failed');
  });

  it('counts afresh after HAProxy was seen running again', async () => {
    const { downtime, clock, haproxy } = setup();
    haproxy.state = 'restarting';
    downtime.restarting();
    await clock.advance(50_000);
    haproxy.state = 'running';
    expect(downtime.problem()).toBeUndefined();
    haproxy.state = 'restarting';
    downtime.restarting();
    await clock.advance(50_000);
    expect(downtime.problem()).toBeUndefined();
  });

  it('refuses a limit that is not a positive number, showing it', () => {
    expect(() => new HaproxyDowntime({ haproxy: { state: 'stopped' }, clock: new FakeClock(), limitMs: 0 })).toThrow(/limitMs must be a positive number, got 0/);
  });
});
