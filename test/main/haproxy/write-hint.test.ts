import { describe, expect, it } from 'vitest';
import type { DeployableRender } from '../../../src/main/deploy/deploy-target.js';
import { VIEW_PREFIX } from '../../../src/main/deploy/runtime-view.js';
import { writeHint } from '../../../src/main/haproxy/local-haproxy-target.js';

const files = { maps: {}, files: {}, certificates: {} };
const r1: DeployableRender = { renderId: 'r1', checksum: 'c1', haproxyConfig: 'global\n', auxiliaryFiles: files };
const r2: DeployableRender = { renderId: 'r2', checksum: 'c2', haproxyConfig: 'global\n# 2\n', auxiliaryFiles: files, patch: { from: 'r1', edits: { config: [{ at: 7, remove: 0, text: '# 2\n' }], 'files/server-slots.txt': [] } } };

describe('writeHint', () => {
  it('names the files a render patched, and their edits, when it patches the render written last', () => {
    expect(writeHint(r2, r1)).toEqual({ id: 'c2', changed: { from: 'c1', files: ['config', 'files/server-slots.txt'], edits: r2.patch?.edits } });
  });

  it('names nothing when the render written last is another one, a runtime view of it, or unknown', () => {
    expect(writeHint(r2, { ...r1, renderId: 'r0', checksum: 'c0' })).toEqual({ id: 'c2' });
    // A runtime view keeps the renderId of the render it took its servers from, but not its text.
    expect(writeHint(r2, { ...r1, checksum: `${VIEW_PREFIX}x` })).toEqual({ id: 'c2' });
    expect(writeHint(r2, undefined)).toEqual({ id: 'c2' });
    expect(writeHint(r1, r2)).toEqual({ id: 'c1' });
  });
});
