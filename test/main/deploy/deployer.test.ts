import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeployerOptions } from '../../../src/main/deploy/deployer.js';
import { newEvent } from '../../../src/main/events/events.js';
import { config, DeployerHarness, type Spec } from '../../helpers/deployer-harness.js';
import type { FakeDeployTargetOptions } from '../../helpers/fake-deploy-target.js';

const BASE: Spec = { backends: { be: ['10.0.0.1:80', '127.0.0.1:1 disabled'] } };
const MOVED: Spec = { backends: { be: ['10.0.0.9:80', '127.0.0.1:1 disabled'] } };
const SCALED: Spec = { backends: { be: ['10.0.0.1:80', '10.0.0.2:80'] } };
const TIMEOUT: Spec = { ...BASE, timeout: '30s' };

let harness: DeployerHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function started(options?: Partial<DeployerOptions>, target?: Omit<FakeDeployTargetOptions, 'clock'>): Promise<DeployerHarness> {
  harness = await new DeployerHarness(options, target).start();
  return harness;
}

describe('Deployer', () => {
  it('reloads the first render once the gate passes it, and is ready after', async () => {
    const h = await started();
    const first = await h.render(BASE);
    expect(h.target.calls).toEqual([]);
    expect(h.deployer.ready).toBe(false);
    await h.verdict(first);
    expect(h.target.sequence).toEqual(['write', 'reload']);
    expect(h.target.running).toBe(first.checksum);
    expect(h.deployer.ready).toBe(true);
    expect(h.completed).toEqual([
      expect.objectContaining({ kind: 'reload', outcome: 'success', reason: 'resource_change', checksum: first.checksum, runtimeOps: 0, correlationId: first.correlationId }),
    ]);
  });

  it('never reloads a render the gate refused', async () => {
    const h = await started();
    const bad = await h.render(BASE);
    await h.verdict(bad, 'refused');
    await h.clock.runAll();
    expect(h.target.calls).toEqual([]);
    expect(h.completed).toEqual([]);
  });

  it('paces reloads from the END of the previous reload', async () => {
    const h = await started({}, { reloadMs: 500 });
    const t0 = h.clock.now();
    await h.passed(BASE);
    await h.clock.advance(100);
    await h.passed(TIMEOUT);
    // The first reload ran 0..500 ms: the next may start at 2,500 ms, not at 2,000.
    await h.clock.advance(2399);
    expect(h.target.sequence).toEqual(['write', 'reload']);
    await h.clock.advance(1 + 500);
    expect(h.target.reloads.map((r) => [r.startedAt - t0, r.endedAt - t0])).toEqual([
      [0, 500],
      [2500, 3000],
    ]);
  });

  it('deploys only the latest of the renders that arrive while a reload runs', async () => {
    const h = await started({}, { reloadMs: 500 });
    await h.passed(BASE);
    await h.passed({ ...BASE, timeout: '31s' });
    await h.passed({ ...BASE, timeout: '32s' });
    const latest = await h.passed({ ...BASE, timeout: '33s' });
    await h.clock.runAll();
    expect(h.target.reloads).toHaveLength(2);
    expect(h.target.running).toBe(latest.checksum);
    expect(h.outcomes).toEqual(['reload/success', 'reload/success']);
  });

  it('skips a render whose checksum equals the deployed one', async () => {
    const h = await started();
    const first = await h.passed(BASE);
    await h.passed(BASE);
    expect(h.target.reloads).toHaveLength(1);
    expect(h.completed.map((e) => [e.kind, e.checksum])).toEqual([
      ['reload', first.checksum],
      ['skipped', first.checksum],
    ]);
  });

  it('forces a reload of the latest render on drift prevention even when nothing changed, once per drift', async () => {
    const h = await started();
    const first = await h.passed(BASE);
    await h.clock.advance(60_000);
    await h.drift();
    expect(h.target.reloads).toHaveLength(2);
    expect(h.completed.at(-1)).toMatchObject({ kind: 'reload', outcome: 'success', reason: 'drift_prevention', checksum: first.checksum });
    // The Reconciler's re-render for the same drift is not forced a second time.
    await h.passed(BASE, 'drift_prevention');
    await h.clock.runAll();
    expect(h.target.reloads).toHaveLength(2);
    expect(h.completed.at(-1)).toMatchObject({ kind: 'skipped', reason: 'drift_prevention' });
  });

  it('applies an endpoint change through the Runtime API at once, inside the pacing window, and writes its files', async () => {
    const h = await started();
    await h.passed(BASE);
    await h.clock.advance(10);
    const moved = await h.render(MOVED);
    expect(h.target.runtimeBatches).toEqual([[{ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.9', port: 80 }]]);
    expect(h.target.sequence).toEqual(['write', 'reload', 'runtime', 'write']);
    expect(h.target.onDisk).toBe(moved.checksum);
    expect(h.completed.at(-1)).toMatchObject({ kind: 'runtime', outcome: 'success', runtimeOps: 1, checksum: moved.checksum });
    expect(h.deployer.deployedChecksum).toBe(moved.checksum);
  });

  it('sends the next endpoint change while the files of the previous one are still being written, and writes them in order', async () => {
    const h = await started({}, { writeMs: 100 });
    await h.passed(BASE);
    await h.clock.advance(100);
    const moved = await h.render(MOVED);
    // Applied and counted before its files are on disk.
    expect(h.completed.at(-1)).toMatchObject({ kind: 'runtime', outcome: 'success', checksum: moved.checksum });
    expect(h.target.onDisk).not.toBe(moved.checksum);
    await h.clock.advance(10);
    const again = await h.render({ backends: { be: ['10.0.0.7:80', '127.0.0.1:1 disabled'] } });
    expect(h.target.runtimeBatches).toHaveLength(2);
    expect(h.deployer.deployedChecksum).toBe(again.checksum);
    await h.clock.runAll();
    const writes = h.target.writes.map((w) => w.checksum);
    expect(writes.slice(1)).toEqual([moved.checksum, again.checksum]);
    expect(h.target.onDisk).toBe(again.checksum);
  });

  it('reloads only after the files of an earlier runtime change are on disk, and loads the newest files', async () => {
    const h = await started({}, { writeMs: 100 });
    await h.passed(BASE);
    await h.clock.advance(5000);
    const moved = await h.render(MOVED);
    const structural = await h.passed({ ...MOVED, timeout: '30s' });
    await h.clock.runAll();
    const [, movedWrite, reloadWrite] = h.target.writes;
    expect([movedWrite?.checksum, reloadWrite?.checksum]).toEqual([moved.checksum, structural.checksum]);
    expect(reloadWrite!.at).toBeGreaterThanOrEqual(movedWrite!.endedAt!);
    const reload = h.target.reloads.at(-1)!;
    expect(reload).toMatchObject({ ok: true, checksum: structural.checksum });
    expect(reload.startedAt).toBeGreaterThanOrEqual(reloadWrite!.endedAt!);
    expect(h.target.running).toBe(structural.checksum);
  });

  it('writes the files of a runtime change whose first write failed with the next write', async () => {
    const h = await started();
    const base = await h.passed(BASE);
    h.target.failNextWrite();
    const moved = await h.render(MOVED);
    await h.clock.runAll();
    // HAProxy runs the change; the failed write is reported after its success.
    expect(h.outcomes.slice(-2)).toEqual(['runtime/success', 'runtime/failure']);
    expect(h.completed.at(-1)).toMatchObject({ checksum: moved.checksum, error: 'files not written: ENOSPC: no space left on device' });
    expect(h.deployer.deployedChecksum).toBe(moved.checksum);
    expect(h.target.onDisk).toBe(base.checksum);
    const again = await h.render({ backends: { be: ['10.0.0.7:80', '127.0.0.1:1 disabled'] } });
    await h.clock.runAll();
    expect(h.target.onDisk).toBe(again.checksum);
  });

  it('holds renders after a refusal until one passes the gate (the gate latch)', async () => {
    const h = await started();
    await h.passed(BASE);
    const refused = await h.render(TIMEOUT);
    await h.verdict(refused, 'refused');
    expect(h.deployer.latched).toBe(true);
    // Even a runtime-only change waits: the gate says the renders are broken.
    const held = await h.render(MOVED);
    await h.clock.runAll();
    expect(h.target.runtimeBatches).toEqual([]);
    expect(h.target.reloads).toHaveLength(1);
    await h.verdict(held);
    expect(h.deployer.latched).toBe(false);
    expect(h.target.runtimeBatches).toHaveLength(1);
    expect(h.deployer.deployedChecksum).toBe(held.checksum);
  });

  it('reverts a render applied at runtime when the gate then refuses it', async () => {
    const h = await started();
    const good = await h.passed(BASE);
    const moved = await h.render(MOVED);
    expect(h.deployer.deployedChecksum).toBe(moved.checksum);
    await h.verdict(moved, 'refused');
    expect(h.target.runtimeBatches).toEqual([
      [{ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.9', port: 80 }],
      [{ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.1', port: 80 }],
    ]);
    expect(h.target.onDisk).toBe(good.checksum);
    expect(h.deployer.deployedChecksum).toBe(good.checksum);
    expect(h.completed.at(-1)).toMatchObject({ kind: 'runtime', outcome: 'success', reason: 'revert', checksum: good.checksum });
  });

  it('reverts a runtime change whose refusal arrived while it was being applied', async () => {
    const h = await started({}, { runtimeMs: 100 });
    const good = await h.passed(BASE);
    const moved = await h.render(MOVED);
    await h.verdict(moved, 'refused');
    expect(h.target.runtimeBatches).toHaveLength(1);
    await h.clock.advance(100);
    await h.clock.advance(100);
    expect(h.target.runtimeBatches).toHaveLength(2);
    expect(h.deployer.deployedChecksum).toBe(good.checksum);
    expect(h.completed.map((e) => e.reason)).toEqual(['resource_change', 'resource_change', 'revert']);
  });

  it("applies a mixed render's runtime part first, then reloads it when the pacing allows", async () => {
    const h = await started();
    await h.passed(BASE);
    await h.clock.advance(500);
    const mixed = await h.passed({ ...SCALED, timeout: '30s' });
    expect(h.target.runtimeBatches).toEqual([
      [
        { type: 'server-addr', backend: 'be', server: 'srv2', address: '10.0.0.2', port: 80 },
        { type: 'server-state', backend: 'be', server: 'srv2', state: 'ready' },
      ],
    ]);
    expect(h.target.reloads).toHaveLength(1);
    await h.clock.advance(1499);
    expect(h.target.reloads).toHaveLength(1);
    await h.clock.advance(1);
    expect(h.target.sequence).toEqual(['write', 'reload', 'runtime', 'write', 'reload']);
    expect(h.target.running).toBe(mixed.checksum);
    expect(h.outcomes).toEqual(['reload/success', 'runtime/success', 'reload/success']);
  });

  it('reports a failed reload and keeps the previous render as deployed', async () => {
    const h = await started();
    const first = await h.passed(BASE);
    await h.clock.advance(5000);
    h.target.failNextReload('the new worker exited');
    const second = await h.passed(TIMEOUT);
    expect(h.completed.at(-1)).toMatchObject({ kind: 'reload', outcome: 'failure', checksum: second.checksum, error: 'reload failed: the new worker exited' });
    expect(h.target.running).toBe(first.checksum);
    expect(h.deployer.deployedChecksum).toBe(first.checksum);
    // The old files are put back, so a restart does not load the config HAProxy rejected.
    expect(h.target.onDisk).toBe(first.checksum);
  });

  it('after a reload whose outcome is unknown, deploys the next render by a reload, not at runtime', async () => {
    const h = await started();
    await h.passed(BASE);
    await h.clock.advance(5000);
    vi.spyOn(h.target, 'reload').mockRejectedValueOnce(new Error('master socket unreachable'));
    await h.passed(TIMEOUT);
    expect(h.completed.at(-1)).toMatchObject({ kind: 'reload', outcome: 'failure', error: 'reload failed: master socket unreachable' });
    expect(h.deployer.deployedChecksum).toBeUndefined();
    await h.clock.advance(5000);
    await h.passed(MOVED);
    expect(h.outcomes).toEqual(['reload/success', 'reload/failure', 'reload/success']);
    expect(h.target.runtimeBatches).toEqual([]);
  });

  it('falls back to a reload when the Runtime API refuses a change', async () => {
    const h = await started();
    await h.passed(BASE);
    await h.clock.advance(5000);
    h.target.failNextRuntime('[err]: No such server.');
    const moved = await h.passed(MOVED);
    expect(h.outcomes).toEqual(['reload/success', 'runtime/failure', 'reload/success']);
    expect(h.completed[1]?.error).toBe('runtime API: [err]: No such server.');
    expect(h.target.running).toBe(moved.checksum);
  });

  it('adopts the config the target already runs instead of reloading it', async () => {
    const checksum = createHash('sha256').update(config(BASE)).update(JSON.stringify({ 'host.map': 'a.example/ be\n' })).digest('hex');
    const h = await started({}, { currentChecksum: checksum });
    await h.passed(BASE);
    expect(h.target.calls).toEqual([]);
    expect(h.outcomes).toEqual(['skipped/success']);
    expect(h.deployer.ready).toBe(true);
  });

  it('reports the endpoint-change-to-applied latency from the earliest update the render includes', async () => {
    const h = await started();
    await h.passed(BASE);
    const updated = (store: string, isInitialSync = false) =>
      h.bus.publish(newEvent('resource.index.updated', { resourceTypeName: store, changeStats: { created: 0, modified: 1, deleted: 0, isInitialSync } }, undefined, h.clock));
    updated('endpointslices', true);
    await h.clock.advance(100);
    h.storeVersion = 5;
    updated('ingresses');
    await h.clock.advance(100);
    updated('endpointslices');
    await h.clock.advance(300);
    h.storeVersion = 6;
    updated('endpointslices');
    await h.clock.advance(450);
    // Rendered from store version 6: it includes both endpoint updates; the first was 750 ms ago.
    await h.render(MOVED);
    expect(h.latencies).toEqual([0.75]);
    h.storeVersion = 7;
    updated('endpointslices');
    await h.clock.advance(200);
    await h.render(BASE);
    expect(h.latencies).toEqual([0.75, 0.2]);
  });

  it('publishes nothing more after its term ends, and finishes a reload in flight', async () => {
    const h = await started({}, { reloadMs: 500 });
    await h.passed(BASE);
    h.term.abort();
    await h.clock.advance(500);
    await h.running;
    expect(h.outcomes).toEqual(['reload/success']);
    await h.passed(TIMEOUT);
    expect(h.target.reloads).toHaveLength(1);
    harness = undefined;
  });
});
