// Reloads under steady churn: renders that come faster than the gate judges them must not keep
// every reload waiting. The gate checks one render at a time (the newest when it is free), so the
// verdict the newest render waits for is always one check away; meanwhile the newest render that
// passed is reloaded, with the newest render's server slots so that no endpoint steps back.
import { afterEach, describe, expect, it } from 'vitest';
import { DeployerHarness, type Spec } from '../../helpers/deployer-harness.js';

const BASE: Spec = { backends: { be: ['10.0.0.1:80', '127.0.0.1:1 disabled'] } };
const timeout = (seconds: number, spec: Spec = BASE): Spec => ({ ...spec, timeout: `${seconds}s` });
const MOVED: Spec = { backends: { be: ['10.0.0.9:80', '127.0.0.1:1 disabled'] } };

let harness: DeployerHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** A deployed BASE; a reload waits up to 2 s for its own verdict. */
async function deployed(): Promise<DeployerHarness> {
  harness = await new DeployerHarness({ verdictWaitLimitMs: 2000 }).start();
  await harness.passed(BASE);
  expect(harness.target.reloads).toHaveLength(1);
  return harness;
}

describe('Deployer under steady churn', () => {
  it('reloads at the pace of the gate when every render is replaced before its check ends', async () => {
    const h = await deployed();
    // The gate is checking `checking`; two more renders arrive before its verdict, every time.
    let checking = await h.render(timeout(30));
    for (let i = 1; i <= 5; i++) {
      await h.clock.advance(2500);
      await h.render(timeout(30 + 2 * i - 1));
      const next = await h.render(timeout(30 + 2 * i));
      await h.verdict(checking, 'ok', false);
      checking = next;
    }
    await h.clock.advance(2500);
    // One reload per verdict (paced 2 s apart), each of the render just judged; none waited for ever.
    expect(h.target.reloads.map((r) => r.ok)).toEqual([true, true, true, true, true, true]);
    expect(h.target.written?.haproxyConfig).toContain('timeout server 38s');
    // The newest render follows as soon as its own verdict comes.
    await h.verdict(checking, 'ok', true);
    await h.clock.advance(2500);
    expect(h.target.written?.haproxyConfig).toContain('timeout server 40s');
    expect(h.target.running).toBe(h.target.written?.checksum);
  });

  it("keeps the newest render's endpoints when it reloads an older render that passed", async () => {
    const h = await deployed();
    await h.clock.advance(2500);
    const older = await h.render(timeout(30));
    // Newer: another structure, and an endpoint moved, which goes out at once through the Runtime API.
    const newer = await h.render(timeout(31, MOVED));
    expect(h.target.runtimeBatches).toEqual([[{ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.9', port: 80 }]]);
    await h.verdict(older, 'ok', false);
    // It waits up to the limit for the newest render's own verdict, then takes the one that passed.
    await h.clock.advance(1999);
    expect(h.target.reloads).toHaveLength(1);
    await h.clock.advance(1);
    expect(h.target.reloads).toHaveLength(2);
    const reloaded = h.target.written?.haproxyConfig ?? '';
    expect(reloaded).toContain('timeout server 30s');
    expect(reloaded).toContain('server srv1 10.0.0.9:80');
    expect(reloaded).not.toContain('10.0.0.1:80');
    // No runtime operation undoes the move after the reload; the deployment names the render it serves.
    expect(h.target.runtimeBatches).toHaveLength(1);
    expect(h.completed.at(-1)?.checksum).toBe(older.checksum);
    await h.verdict(newer, 'ok', true);
    await h.clock.advance(2500);
    expect(h.target.running).toBe(newer.checksum);
    expect(h.outcomes).toEqual(['reload/success', 'runtime/success', 'reload/success', 'reload/success']);
  });

  it('never deploys a refused render through an older pass, and holds the rest as the latch says', async () => {
    const h = await deployed();
    await h.clock.advance(2500);
    const older = await h.render(timeout(30));
    const refused = await h.render(timeout(31));
    await h.verdict(older, 'ok', false);
    await h.clock.advance(2000);
    await h.verdict(refused, 'refused', true);
    const held = await h.render(timeout(32));
    await h.clock.advance(10_000);
    expect(h.target.reloads.map((r) => r.checksum)).toHaveLength(2);
    expect(h.target.written?.haproxyConfig).toContain('timeout server 30s');
    // The held render goes once it passes.
    await h.verdict(held, 'ok', true);
    await h.clock.advance(2500);
    expect(h.target.running).toBe(held.checksum);
  });

  it('does not reload the same passed render again after its reload failed', async () => {
    const h = await deployed();
    await h.clock.advance(2500);
    const older = await h.render(timeout(30));
    const newer = await h.render(timeout(31));
    h.target.failNextReload();
    await h.verdict(older, 'ok', false);
    await h.clock.advance(20_000);
    expect(h.target.reloads.map((r) => r.ok)).toEqual([true, false]);
    await h.verdict(newer, 'ok', true);
    await h.clock.advance(2500);
    expect(h.target.reloads.map((r) => r.ok)).toEqual([true, false, true]);
    expect(h.target.running).toBe(newer.checksum);
  });

  it('still makes one reload of a burst whose newest verdict comes within the limit', async () => {
    const h = await deployed();
    await h.clock.advance(2500);
    const first = await h.render(timeout(30));
    const last = await h.render(timeout(31));
    await h.verdict(first, 'ok', false);
    await h.clock.advance(1500);
    await h.verdict(last, 'ok', true);
    await h.clock.advance(10_000);
    expect(h.target.reloads.map((r) => r.checksum)).toEqual([h.target.reloads[0]?.checksum, last.checksum]);
  });

  it('waits for the verdict as before when nothing newer than the deployed render has passed', async () => {
    const h = await deployed();
    await h.clock.advance(2500);
    await h.render(timeout(30));
    await h.render(timeout(31));
    await h.clock.advance(60_000);
    expect(h.target.reloads).toHaveLength(1);
  });
});

describe('Deployer across leadership terms', () => {
  it('keeps deploying in a term that began while the previous term was still finishing its reload', async () => {
    const h = (harness = await new DeployerHarness({}, { reloadMs: 5000 }).start());
    await h.passed(BASE);
    // Leadership lost mid-reload, and won back at once, before the reload ended.
    h.term.abort();
    const second = new AbortController();
    const running = h.deployer.start(second.signal);
    await h.deployer.whenReady();
    await h.clock.advance(5000);
    await h.clock.advance(2000);
    const next = await h.passed(timeout(30));
    await h.clock.advance(10_000);
    expect(h.target.running).toBe(next.checksum);
    second.abort();
    await h.clock.runAll();
    await running;
  });
});
