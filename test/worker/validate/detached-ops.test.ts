// detachedOps: the ops a chunk record keeps are copies equal to what the parser recorded.
import { describe, expect, it } from 'vitest';
import { detachedOps } from '../../../src/worker/validate/incremental/detached-ops.js';
import { StructureParser } from '../../../src/worker/validate/structure/structure-parser.js';

describe('detachedOps', () => {
  it('copies the ops of a parsed chunk to equal values', () => {
    const text = 'frontend http\n  bind :80\n  default_backend ing_team-0_app-0_app-0_80\nbackend ing_team-0_app-0_app-0_80\n  server s1 127.0.0.1:8080\n';
    const ops = new StructureParser().parse(text);
    const copy = detachedOps(ops);

    expect(ops.length).toBeGreaterThan(0);
    expect(copy).toEqual(ops);
    expect(copy).not.toBe(ops);
  });

  it('keeps an object two ops share shared in the copy, and copies scalars as they are', () => {
    const section = { kind: 'frontend', name: 'a-frontend-with-a-long-name', named: true };
    const ops = [
      { op: 'bind', line: 2, addr: ':80', section },
      { op: 'bind', line: 3, addr: ':443', section },
      { op: 'crt-base', value: null },
    ];
    const copy = detachedOps(ops);

    expect(copy).toEqual(ops);
    expect(copy[0]?.section).toBe(copy[1]?.section);
    expect(copy[0]?.section).not.toBe(section);
  });
});
