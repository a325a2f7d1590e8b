// A config patch on the agent rewrites only the lines it touches: the result is always the
// whole-config rewrite of the patched text, whatever the patch spans.
import { describe, expect, it } from 'vitest';
import { renderRewrite } from '../../../src/main/agent/render-rewrite.js';

const leader = { mapsDir: '/leader/out/maps', filesDir: '/leader/out/files', certsDir: '/leader/out/certs', runDir: '/leader/out/run' };
const SOURCE = [
  'global',
  '    stats socket /leader/out/run/admin.sock mode 600 level admin',
  'frontend http',
  '    bind *:8080',
  '    use_backend %[req.hdr(host),map(/leader/out/maps/host-exact.map)]',
  'backend be_a',
  '    server s1 10.0.0.1:80',
  '    server s2 10.0.0.2:80',
  'frontend https',
  '    bind :8443 ssl crt-list /leader/out/files/crt-list.txt',
  '',
].join('\n');

function patchOf(source: string, start: number, end: number, text: string): { patched: string; patch: { start: number; end: number; text: string } } {
  return { patched: source.slice(0, start) + text + source.slice(end), patch: { start, end, text } };
}

describe('renderRewrite configPatched', () => {
  const rewrite = renderRewrite(leader, '/agent', '127.0.0.9');
  const rewritten = rewrite.config(SOURCE);

  it('gives the whole-config rewrite for a patch inside one line', () => {
    const start = SOURCE.indexOf('10.0.0.2');
    const { patched, patch } = patchOf(SOURCE, start, start + '10.0.0.2'.length, '10.0.0.7');
    const result = rewrite.configPatched(SOURCE, rewritten, patched, patch);
    expect(result).toBe(rewrite.config(patched));
    expect(result).toContain('server s2 10.0.0.7:80');
    expect(result).toContain('bind 127.0.0.9:8080');
  });

  it('rewrites the paths and binds of lines a patch adds, removes or splits', () => {
    const cases: [number, number, string][] = [
      [SOURCE.indexOf('backend be_a'), SOURCE.indexOf('frontend https'), 'backend be_b\n    bind *:9090\n    server m /leader/out/maps/x.map\n'],
      [0, SOURCE.length, 'frontend only\n    bind *:1\n'],
      [SOURCE.indexOf(':8443'), SOURCE.indexOf(':8443') + 1, '\n    bind *:7\n    crt /leader/out/certs/a.pem :'],
      [SOURCE.indexOf('*:8080'), SOURCE.indexOf('*:8080') + 1, ''],
      [SOURCE.length, SOURCE.length, 'backend tail\n    server t /leader/out/run/x'],
      [0, 0, '    bind *:5\n'],
      [SOURCE.indexOf('\n'), SOURCE.indexOf('\n') + 1, ''],
    ];
    for (const [start, end, text] of cases) {
      const { patched, patch } = patchOf(SOURCE, start, end, text);
      expect(rewrite.configPatched(SOURCE, rewritten, patched, patch)).toBe(rewrite.config(patched));
    }
  });

  it('rewrites the whole config when the held one does not have the lines of the source', () => {
    const start = SOURCE.indexOf('10.0.0.2');
    const { patched, patch } = patchOf(SOURCE, start, start + 1, '2');
    expect(rewrite.configPatched(SOURCE, 'global\n', patched, patch)).toBe(rewrite.config(patched));
  });
});
