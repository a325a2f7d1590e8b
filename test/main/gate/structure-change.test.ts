import { describe, expect, it } from 'vitest';
import { structuralChange, type RenderChange } from '../../../src/main/gate/structure-change.js';

const BEFORE = 'global\n  log stdout format raw local0\n\nbackend b1\n  balance roundrobin\n  server s1 10.0.0.1:8080 weight 2\n  server s2 10.0.0.2:8080 disabled\n';

/** The change from BEFORE to `after`, as the whole config's window. */
function change(after: string, files: Partial<Pick<RenderChange, 'changedFiles' | 'removedFiles'>> & { had?: string[] } = {}): RenderChange {
  return {
    before: BEFORE,
    window: { start: 0, endBefore: BEFORE.length, text: after },
    changedFiles: files.changedFiles ?? [],
    removedFiles: files.removedFiles ?? [],
    hadFile: (id) => (files.had ?? []).includes(id),
  };
}

describe('structural change (whether haproxy -c must judge a render again)', () => {
  it('sees only runtime state in a server address, port, weight or state, in map entries and in server-slots.txt', () => {
    const after = BEFORE.replace('10.0.0.1:8080 weight 2', '10.0.0.9:9090 weight 7').replace('10.0.0.2:8080 disabled', '10.0.0.3:8080');
    expect(structuralChange(change(after, { changedFiles: ['maps/host.map', 'files/server-slots.txt'], had: ['maps/host.map', 'files/server-slots.txt'] }))).toBeUndefined();
  });

  it('sees structure in any other line, a server parameter, a host name, or lines added', () => {
    expect(structuralChange(change(BEFORE.replace('roundrobin', 'leastconn')))).toMatch(/balance leastconn/);
    expect(structuralChange(change(BEFORE.replace('weight 2', 'weight 2 check')))).toMatch(/server s1/);
    expect(structuralChange(change(BEFORE.replace('10.0.0.1:8080', 'app.internal:8080')))).toMatch(/app\.internal/);
    expect(structuralChange(change(`${BEFORE}  server s3 10.0.0.3:8080\n`))).toBe('the config has lines added or removed');
  });

  it('sees structure in a new or removed map, and in any changed file but the runtime ones', () => {
    expect(structuralChange(change(BEFORE, { changedFiles: ['maps/new.map'] }))).toBe('maps/new.map is new');
    expect(structuralChange(change(BEFORE, { removedFiles: ['maps/host.map'] }))).toBe('maps/host.map was removed');
    expect(structuralChange(change(BEFORE, { changedFiles: ['files/crt-list.txt'], had: ['files/crt-list.txt'] }))).toBe('files/crt-list.txt changed');
    expect(structuralChange(change(BEFORE, { changedFiles: ['certificates/a.pem'], had: ['certificates/a.pem'] }))).toBe('certificates/a.pem changed');
  });
});
