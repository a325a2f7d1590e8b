// The auxiliary baseline the Coordinator hands each render: the last output, rolled back to the last
// confirmed one when the gate refuses the newest render, and empty at the start of a term.
import { afterEach, describe, expect, it } from 'vitest';
import { EMPTY_AUXILIARY_FILES, PipelineError } from '../../../src/main/pipeline/pipeline.js';
import { waitUntil } from '../../helpers/async.js';
import { endHarness, harness } from '../../helpers/coordinator-harness.js';
import { trigger, verdict } from '../../helpers/events.js';

const EMPTY_BASELINE = { auxiliaryFiles: { maps: {}, files: {}, certificates: {} } };

afterEach(endHarness);

describe('Coordinator auxiliary baseline', () => {
  it('the first render of a term receives an empty baseline', async () => {
    const h = harness();
    await h.startTerm();

    const baseline = await h.nextBaseline();

    expect(baseline).toEqual(EMPTY_BASELINE);
    expect(h.coordinator.baseline.auxiliaryFiles).toBe(EMPTY_AUXILIARY_FILES);
    expect(h.coordinator.confirmedRenderId).toBeUndefined();
  });

  it("a successful render's output is passed as the baseline of the next execute", async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r1.haproxyConfig, auxiliaryFiles: r1.auxiliaryFiles });
  });

  it('a failed render leaves the baseline as it was', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(trigger());
    await h.pipeline.waitForCalls(2);
    h.pipeline.call(1).result.reject(new PipelineError('validation', 'bad'));
    await h.waitForCompleted(2);

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r1.haproxyConfig, auxiliaryFiles: r1.auxiliaryFiles });
  });

  it('an ok verdict on the newest render confirms it', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();

    h.publish(verdict(r1.renderId, { ok: true, refused: false, newest: true }));
    await waitUntil(() => h.coordinator.confirmedRenderId !== undefined, 'the baseline to be confirmed');

    expect(h.coordinator.confirmedRenderId).toBe(r1.renderId);
    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r1.haproxyConfig, auxiliaryFiles: r1.auxiliaryFiles });
  });

  it('a refused verdict rolls back to the last confirmed baseline', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(verdict(r1.renderId));
    const r2 = await h.render();
    expect(h.coordinator.baseline.haproxyConfig).toBe(r2.haproxyConfig);

    h.publish(verdict(r2.renderId, { ok: false, refused: true, newest: true, message: '[ALERT] parsing error' }));

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r1.haproxyConfig, auxiliaryFiles: r1.auxiliaryFiles });
    expect(h.coordinator.confirmedRenderId).toBe(r1.renderId);
  });

  it('a refused verdict with nothing confirmed yet rolls back to the empty baseline', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();

    h.publish(verdict(r1.renderId, { ok: false, refused: true }));

    expect(await h.nextBaseline()).toEqual(EMPTY_BASELINE);
  });

  it.each([
    ['refused', { ok: false, refused: true }],
    ['ok', { ok: true, refused: false }],
  ])('ignores a %s verdict with newest: false', async (_kind, outcome) => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(verdict(r1.renderId));
    const r2 = await h.render();

    h.publish(verdict(r2.renderId, { ...outcome, newest: false }));

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r2.haproxyConfig, auxiliaryFiles: r2.auxiliaryFiles });
    expect(h.coordinator.confirmedRenderId).toBe(r1.renderId);
  });

  it('a verdict that neither passed nor refused (the gate could not run) changes nothing', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(verdict(r1.renderId));
    const r2 = await h.render();

    h.publish(verdict(r2.renderId, { ok: false, refused: false, newest: true, message: 'haproxy not installed' }));

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r2.haproxyConfig, auxiliaryFiles: r2.auxiliaryFiles });
    expect(h.coordinator.confirmedRenderId).toBe(r1.renderId);
  });

  it('a fresh start() begins a new term with an empty baseline', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(verdict(r1.renderId));
    await waitUntil(() => h.coordinator.confirmedRenderId === r1.renderId, 'confirmation');
    await h.render();
    await h.endTerm();

    await h.startTerm();

    expect(h.coordinator.confirmedRenderId).toBeUndefined();
    expect(await h.nextBaseline()).toEqual(EMPTY_BASELINE);
  });
});
