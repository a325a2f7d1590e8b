import { describe, expect, it, vi } from 'vitest';
import { MemorySampler } from '../../../src/main/tools/loadtest/memory.js';

describe('MemorySampler', () => {
  it('keeps its series strictly increasing in time when it stops in the same millisecond as the flood ends', async () => {
    let now = 1_000;
    const spy = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      const sampler = new MemorySampler(1_000, null);
      now += 2_019.2;
      sampler.markFloodEnd();
      now += 0.2; // the same rounded millisecond
      await sampler.stop();
      const times = sampler.points.map((p) => p.tMs);
      expect(times).toEqual([2019]);
      expect(sampler.floodEndMs).toBe(2019);
    } finally {
      spy.mockRestore();
    }
  });
});
