// The diff of a render given as edits of the deployed one: the same runtime operations and
// verdict as the whole-config diff, computed from the edited sections alone; and only for a
// patch of exactly what runs.
import { describe, expect, it } from 'vitest';
import { diffRenders } from '../../../src/main/deploy/config-diff.js';
import type { DeployableRender } from '../../../src/main/deploy/deploy-target.js';
import { diffDeployed, diffPatch } from '../../../src/main/deploy/patch-diff.js';
import type { RenderSuccess } from '../../../src/worker/protocol.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, endpointSlice, indexedStores, ingress, rule, service } from '../../helpers/cluster.js';

const NS = 'shop';

async function lanePair(): Promise<{ before: DeployableRender; after: DeployableRender }> {
  const set = await defaultTemplateSet();
  const objects = [];
  for (let i = 0; i < 6; i++) {
    objects.push(ingress(NS, `app${i}`, { rules: [rule(`app${i}.example.com`, { path: '/', service: `svc${i}` })] }), service(NS, `svc${i}`), endpointSlice(NS, `svc${i}`, [`10.0.${i}.1`, `10.0.${i}.2`]));
  }
  const stores = indexedStores(set, objects);
  const engine = new TemplateEngine();
  const render = (version: number, baseline?: RenderSuccess): RenderSuccess => {
    const outcome = renderAndValidate(engine, { set, lookup: (name) => stores.get(name), storeVersion: version, baseline });
    if (!outcome.ok) throw new Error(outcome.message);
    return outcome;
  };
  const first = render(1);
  stores.get('endpointslices')?.upsert(endpointSlice(NS, 'svc2', ['10.0.2.2', '10.0.2.7', '10.0.2.8']));
  stores.get('endpointslices')?.upsert(endpointSlice(NS, 'svc4', [{ address: '10.0.4.1', ready: false }, '10.0.4.2']));
  const second = render(2, first);
  if (second.edits === undefined) throw new Error('the endpoint lane was expected to render the change');
  const before = { renderId: 'r1', checksum: first.checksum, haproxyConfig: first.haproxyConfig, auxiliaryFiles: first.auxiliaryFiles };
  return { before, after: { renderId: 'r2', checksum: second.checksum, haproxyConfig: second.haproxyConfig, auxiliaryFiles: second.auxiliaryFiles, patch: { from: 'r1', edits: second.edits } } };
}

describe('diffPatch', () => {
  it('gives the runtime operations and verdict of the whole-config diff from the edits alone', async () => {
    const { before, after } = await lanePair();
    const whole = diffRenders(before, after);
    expect(whole.structural).toBe(false);
    expect(whole.runtimeOps.length).toBeGreaterThan(0);
    expect(diffPatch(before, after, after.patch as NonNullable<DeployableRender['patch']>)).toEqual(whole);
    expect(diffDeployed(before, after)).toEqual(whole);
  });

  it('diffs the whole config when the patch is of another render or of a runtime view', async () => {
    const { before, after } = await lanePair();
    const whole = diffRenders(before, after);
    // Edits that claim another base would be wrong here: the whole diff is used instead.
    const misleading: DeployableRender = { ...after, patch: { from: 'other', edits: { config: [] } } };
    expect(diffDeployed(before, misleading)).toEqual(whole);
    const view: DeployableRender = { ...before, checksum: 'view:abc' };
    const claimsView: DeployableRender = { ...after, patch: { from: view.renderId, edits: { config: [] } } };
    expect(diffDeployed(view, claimsView)).toEqual(diffRenders(view, claimsView));
  });
});

describe('diffPatch of an edited map', () => {
  /** A small deterministic generator (mulberry32), so a failing case can be replayed. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const configUsing = (converter: string): string => `frontend fe\n  use_backend %[var(txn.path),${converter}(/etc/haproxy/maps/paths.map)]\n`;
  const render = (id: string, config: string, map: string): DeployableRender => ({ renderId: id, checksum: `sha256:${id}`, haproxyConfig: config, auxiliaryFiles: { maps: { 'paths.map': map }, files: {}, certificates: {} } });

  /** `lines` with a run of them replaced: kept keys with new values, keys dropped, new keys, and now and then a key from elsewhere in the map. */
  function editedLines(next: () => number, lines: readonly string[], round: number): { start: number; removed: number; inserted: string[] } {
    const start = Math.floor(next() * (lines.length + 1));
    const removed = Math.min(lines.length - start, Math.floor(next() * 4));
    const inserted: string[] = [];
    for (const line of lines.slice(start, start + removed)) {
      const roll = next();
      const key = line.split(' ')[0] as string;
      if (roll < 0.4) inserted.push(`${key} be_changed${round}`);
      else if (roll < 0.6) inserted.push(line);
    }
    const adds = Math.floor(next() * 3);
    for (let i = 0; i < adds; i++) {
      // A key from another line of the map (a duplicate or a move), or a new one.
      inserted.push(next() < 0.15 && lines.length > 0 ? `${(lines[Math.floor(next() * lines.length)] as string).split(' ')[0]} be_moved` : `/new/${round}/${i} be_new`);
    }
    return { start, removed, inserted };
  }

  it('gives the operations and verdict of the whole-map diff, for exact and first-match maps, from the changed lines', () => {
    const next = random(17);
    let compared = 0;
    for (let round = 0; round < 400; round++) {
      const config = configUsing(next() < 0.5 ? 'map' : 'map_beg');
      const count = 1 + Math.floor(next() * 12);
      const lines = Array.from({ length: count }, (_, i) => `/app/${i}${next() < 0.3 ? '/api' : ''} be_${i}`);
      const before = `${lines.join('\n')}\n`;
      const { start, removed, inserted } = editedLines(next, lines, round);
      const after = `${[...lines.slice(0, start), ...inserted, ...lines.slice(start + removed)].join('\n')}\n`;
      if (after === before) continue;
      const at = lines.slice(0, start).reduce((n, line) => n + line.length + 1, 0);
      const remove = lines.slice(start, start + removed).reduce((n, line) => n + line.length + 1, 0);
      const edit = { at, remove, text: inserted.map((line) => `${line}\n`).join('') };
      const deployed = render('r1', config, before);
      const patched: DeployableRender = { ...render('r2', config, after), patch: { from: 'r1', edits: { 'maps/paths.map': [edit] } } };
      // The threshold low enough that some edits go over it.
      const options = { versionedMapThreshold: 2 };
      expect(diffPatch(deployed, patched, patched.patch as NonNullable<DeployableRender['patch']>, options), `round ${round}`).toEqual(diffRenders(deployed, patched, options));
      compared++;
    }
    expect(compared).toBeGreaterThan(300);
  });

  it('reads how a map is looked up from the whole config when the patch also edits other sections', () => {
    const frontend = configUsing('map');
    const backendBefore = 'backend be_a\n  server s1 10.0.0.1:80\n';
    const backendAfter = 'backend be_a\n  server s1 10.0.0.2:80\n';
    const deployed = render('r1', frontend + backendBefore, '/a be_a\n/b be_b\n/c be_c\n');
    const edits = {
      config: [{ at: frontend.length, remove: backendBefore.length, text: backendAfter }],
      'maps/paths.map': [{ at: 7, remove: 7, text: '/d be_d\n' }],
    };
    const patched: DeployableRender = { ...render('r2', frontend + backendAfter, '/a be_a\n/d be_d\n/c be_c\n'), patch: { from: 'r1', edits } };
    const diff = diffPatch(deployed, patched, patched.patch as NonNullable<DeployableRender['patch']>);
    expect(diff).toEqual(diffRenders(deployed, patched));
    // An exact-lookup map takes entry operations, not a replacement.
    expect(diff.runtimeOps.filter((op) => op.type.startsWith('map'))).toEqual([
      { type: 'map-del', file: '/etc/haproxy/maps/paths.map', key: '/b' },
      { type: 'map-add', file: '/etc/haproxy/maps/paths.map', key: '/d', value: 'be_d' },
    ]);
  });

  it('falls back to the whole map for an edit that does not cover whole lines', () => {
    const config = configUsing('map');
    const deployed = render('r1', config, '/a be_a\n/b be_b\n');
    // `/b be_b` -> `/b be_c`, as an edit of the last character of the value alone.
    const patched: DeployableRender = { ...render('r2', config, '/a be_a\n/b be_c\n'), patch: { from: 'r1', edits: { 'maps/paths.map': [{ at: 13, remove: 1, text: 'c' }] } } };
    const diff = diffPatch(deployed, patched, patched.patch as NonNullable<DeployableRender['patch']>);
    expect(diff).toEqual(diffRenders(deployed, patched));
    expect(diff.runtimeOps).toEqual([{ type: 'map-set', file: '/etc/haproxy/maps/paths.map', key: '/b', value: 'be_c' }]);
  });
});
