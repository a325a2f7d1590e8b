// Chained config patches through LineDeltas give, at every step, the whole-config rewrite of the
// patched text (the slow reference), and an edit that turns the previous rewritten config into it.
import { describe, expect, it } from 'vitest';
import { LineDeltas } from '../../../src/main/agent/line-deltas.js';
import { renderRewrite, type RewrittenConfig } from '../../../src/main/agent/render-rewrite.js';

const leader = { mapsDir: '/leader/out/maps', filesDir: '/leader/out/files', certsDir: '/leader/out/certs', runDir: '/leader/out/run' };
const PIECES = ['    bind *:80', '    server s1 10.0.0.1:80', '    use_backend %[req.hdr(host),map(/leader/out/maps/h.map)]', 'backend be', '', '    crt-list /leader/out/files/c.txt', 'x', '\n'];

/** A deterministic generator (mulberry32), so a failure repeats. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function textOf(next: () => number, lines: number): string {
  return Array.from({ length: lines }, () => PIECES[Math.floor(next() * PIECES.length)]).join('\n');
}

describe('LineDeltas', () => {
  it('finds only the lines whose rewrite changed their length', () => {
    const rewrite = renderRewrite(leader, '/agent-dir', '127.0.0.9');
    const source = 'global\n    bind *:80\n    x /leader/out/maps/a.map\nbackend b\n';
    const deltas = LineDeltas.between(source, rewrite.config(source));
    expect(deltas?.size).toBe(2);
    expect(LineDeltas.between('a\nb', 'a')).toBeUndefined();
  });

  it('keeps chained patches equal to the whole-config rewrite of the patched text', () => {
    const rewrite = renderRewrite(leader, '/agent-dir', '127.0.0.9');
    const next = random(7);
    for (let round = 0; round < 20; round++) {
      let source = textOf(next, 40);
      const first = rewrite.config(source);
      let held: RewrittenConfig = { config: first, deltas: LineDeltas.between(source, first) as LineDeltas };
      for (let step = 0; step < 30; step++) {
        const start = Math.floor(next() * (source.length + 1));
        const end = Math.min(source.length, start + Math.floor(next() * 60));
        const text = next() < 0.2 ? '' : textOf(next, 1 + Math.floor(next() * 3)).slice(Math.floor(next() * 5));
        const patched = source.slice(0, start) + text + source.slice(end);
        const result = rewrite.patchConfig(source, held, patched, { start, end, text });
        expect(result).toBeDefined();
        const after = result as RewrittenConfig;
        expect(after.config).toBe(rewrite.config(patched));
        const edit = after.edit as NonNullable<RewrittenConfig['edit']>;
        expect(held.config.slice(0, edit.at) + edit.text + held.config.slice(edit.at + edit.remove)).toBe(after.config);
        source = patched;
        held = after;
      }
    }
  });

  it('refuses a held config that does not line up with the source', () => {
    const rewrite = renderRewrite(leader, '/agent-dir', '127.0.0.9');
    const source = 'global\n    bind *:80\nbackend b\n';
    const stale: RewrittenConfig = { config: 'global\n', deltas: LineDeltas.between(source, rewrite.config(source)) as LineDeltas };
    expect(rewrite.patchConfig(source, stale, 'global\n    bind *:81\nbackend b\n', { start: 16, end: 17, text: '1' })).toBeUndefined();
  });
});
