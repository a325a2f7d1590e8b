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
