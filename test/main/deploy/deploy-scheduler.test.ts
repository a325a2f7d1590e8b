import { describe, expect, it } from 'vitest';
import { sleep } from '../../../src/main/core/clock.js';
import { DeployScheduler, type DeployStep } from '../../../src/main/deploy/deploy-scheduler.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

interface Job {
  readonly name: string;
  readonly paced: boolean;
  /** Simulated time the step takes. */
  readonly ms?: number;
  /** The planner waits while this is true. */
  waiting?: boolean;
  /** Returned from run: the job's next step. */
  readonly follow?: Job;
}

class Harness {
  readonly clock = new FakeClock();
  readonly runs: { name: string; startedAt: number; endedAt: number }[] = [];
  readonly scheduler: DeployScheduler<Job>;

  constructor(minIntervalMs = 2000) {
    this.scheduler = new DeployScheduler<Job>({
      clock: this.clock,
      minIntervalMs,
      logger: silentLogger(),
      plan: (job): DeployStep<Job> =>
        job.waiting === true
          ? { type: 'wait' }
          : {
              type: 'run',
              paced: job.paced,
              run: async () => {
                const startedAt = this.clock.monotonic();
                if ((job.ms ?? 0) > 0) await sleep(this.clock, job.ms as number);
                this.runs.push({ name: job.name, startedAt, endedAt: this.clock.monotonic() });
                return job.follow;
              },
            },
    });
  }

  names(): string[] {
    return this.runs.map((r) => r.name);
  }
}

describe('DeployScheduler', () => {
  it('starts a paced step no sooner than the interval after the END of the previous paced step', async () => {
    const h = new Harness(2000);
    h.scheduler.offer({ name: 'reload-1', paced: true, ms: 700 });
    await h.clock.advance(100);
    h.scheduler.offer({ name: 'reload-2', paced: true, ms: 700 });
    await h.clock.advance(2000);
    // reload-1 ran 0..700: reload-2 may start at 2700, not at 2000.
    expect(h.names()).toEqual(['reload-1']);
    await h.clock.advance(600);
    expect(h.names()).toEqual(['reload-1']);
    await h.clock.advance(100 + 700);
    expect(h.runs).toEqual([
      { name: 'reload-1', startedAt: 0, endedAt: 700 },
      { name: 'reload-2', startedAt: 2700, endedAt: 3400 },
    ]);
  });

  it('runs one step at a time and lets the latest pending job replace the others', async () => {
    const h = new Harness(0);
    h.scheduler.offer({ name: 'a', paced: true, ms: 500 });
    expect(h.scheduler.busy).toBe(true);
    h.scheduler.offer({ name: 'b', paced: true });
    h.scheduler.offer({ name: 'c', paced: true });
    h.scheduler.offer({ name: 'd', paced: true });
    expect(h.scheduler.pending?.name).toBe('d');
    await h.clock.runAll();
    expect(h.names()).toEqual(['a', 'd']);
  });

  it('runs an unpaced step at once, inside the pacing window of the last paced one', async () => {
    const h = new Harness(2000);
    h.scheduler.offer({ name: 'reload', paced: true });
    await flushMicrotasks();
    h.scheduler.offer({ name: 'runtime', paced: false });
    await flushMicrotasks();
    expect(h.runs.map((r) => [r.name, r.startedAt])).toEqual([
      ['reload', 0],
      ['runtime', 0],
    ]);
  });

  it('does not let unpaced steps push back a waiting paced one', async () => {
    const h = new Harness(1000);
    h.scheduler.offer({ name: 'reload-1', paced: true });
    await flushMicrotasks();
    // A runtime step that turns into a reload (a mixed change) while runtime steps keep coming.
    h.scheduler.offer({ name: 'runtime', paced: false, follow: { name: 'reload-2', paced: true } });
    await h.clock.advance(999);
    expect(h.names()).toEqual(['reload-1', 'runtime']);
    await h.clock.advance(1);
    expect(h.runs.at(-1)).toEqual({ name: 'reload-2', startedAt: 1000, endedAt: 1000 });
  });

  it('holds a job while the planner waits and plans it again on kick', async () => {
    const h = new Harness(0);
    const job: Job = { name: 'awaiting-verdict', paced: true, waiting: true };
    h.scheduler.offer(job);
    await h.clock.runAll();
    expect(h.names()).toEqual([]);
    job.waiting = false;
    h.scheduler.kick();
    await flushMicrotasks();
    expect(h.names()).toEqual(['awaiting-verdict']);
  });

  it('drops a follow-up step when a newer job arrived while its step ran', async () => {
    const h = new Harness(0);
    h.scheduler.offer({ name: 'mixed', paced: false, ms: 10, follow: { name: 'mixed-reload', paced: true } });
    h.scheduler.offer({ name: 'newer', paced: true });
    await h.clock.runAll();
    expect(h.names()).toEqual(['mixed', 'newer']);
  });

  it('runs a job offered first ahead of the pending one, which stays queued', async () => {
    const h = new Harness(0);
    h.scheduler.offer({ name: 'busy', paced: false, ms: 10 });
    h.scheduler.offer({ name: 'pending', paced: false });
    h.scheduler.offerFirst({ name: 'revert', paced: false });
    await h.clock.runAll();
    expect(h.names()).toEqual(['busy', 'revert', 'pending']);
  });

  it('clears its pacing timer on stop and waits for the step in flight', async () => {
    const h = new Harness(1000);
    h.scheduler.offer({ name: 'reload-1', paced: true, ms: 50 });
    h.scheduler.offer({ name: 'reload-2', paced: true });
    const idle = h.scheduler.whenIdle();
    await h.clock.advance(50);
    await idle;
    expect(h.clock.pending).toBe(1);
    h.scheduler.stop();
    expect(h.clock.pending).toBe(0);
    await h.clock.advance(5000);
    expect(h.names()).toEqual(['reload-1']);
  });

  it('refuses a negative interval, naming the value', () => {
    expect(() => new DeployScheduler({ clock: new FakeClock(), minIntervalMs: -1, plan: () => ({ type: 'drop' }), logger: silentLogger() })).toThrow(/-1/);
  });
});
