import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RenderDigests } from '../../../src/main/fleet/render-digests.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('RenderDigests', () => {
  it('hashes each text of a render once, however many targets ask for it', async () => {
    const digests = new RenderDigests();
    const config = 'global\n'.repeat(10_000);
    const first = digests.of('c1', 'haproxy.cfg', config);
    expect(digests.of('c1', 'haproxy.cfg', config)).toBe(first);
    expect(await first).toBe(sha256(config));
    expect(await digests.of('c1', 'maps/hosts.map', 'a b\n')).toBe(sha256('a b\n'));
  });

  it('keeps a digest per render checksum, and only the newest renders', async () => {
    const digests = new RenderDigests();
    const first = digests.of('c1', 'haproxy.cfg', 'one');
    expect(await digests.of('c2', 'haproxy.cfg', 'two')).toBe(sha256('two'));
    for (const checksum of ['c3', 'c4', 'c5']) await digests.of(checksum, 'haproxy.cfg', checksum);
    const again = digests.of('c1', 'haproxy.cfg', 'one');
    expect(again).not.toBe(first);
    expect(await again).toBe(sha256('one'));
  });
});
