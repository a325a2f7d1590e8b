// The shipped manifests parse and validate against the Kubernetes API schemas, as a base and with
// every combination of the optional components; the kustomizations list exactly the files there.
import { readdirSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { componentDirs, documentName, manifestVariants, MANIFESTS_DIR, readKustomization } from '../helpers/kube-manifests.js';
import { schemaErrors } from '../helpers/kube-schema.js';

const variants = manifestVariants();

describe('deploy/kubernetes', () => {
  it('builds a base and one variant per combination of the webhook and ingress-status components', () => {
    expect(variants.map((v) => v.name).sort()).toEqual(['base', 'base+ingress-status', 'base+ingress-status+webhook', 'base+webhook']);
  });

  for (const variant of variants) {
    it(`${variant.name}: every object validates against its Kubernetes API schema, with no unknown field`, () => {
      const failures = variant.documents.flatMap((d) => schemaErrors(d.object).map((error) => `${documentName(d)}: ${error}`));
      expect(failures).toEqual([]);
      expect(variant.documents.length).toBeGreaterThan(10);
    });

    it(`${variant.name}: no two objects share a kind, namespace and name`, () => {
      const keys = variant.documents.map((d) => `${d.object.kind} ${d.object.metadata.namespace ?? ''}/${d.object.metadata.name}`);
      expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
    });
  }

  it('the base holds the controller, the HAProxy fleet, their Services, RBAC, PodDisruptionBudgets and the token Secret', () => {
    const base = variants.find((v) => v.name === 'base');
    const kinds = new Set(base?.documents.map((d) => `${d.object.kind}/${d.object.metadata.name}`));
    for (const expected of [
      'Namespace/haptic-system',
      'Deployment/haptic-controller',
      'Deployment/haptic-haproxy',
      'Service/haptic-haproxy',
      'ClusterRole/haptic-controller',
      'ClusterRoleBinding/haptic-controller',
      'Role/haptic-controller',
      'RoleBinding/haptic-controller',
      'PodDisruptionBudget/haptic-haproxy',
      'NetworkPolicy/haptic-haproxy',
      'Secret/haptic-agent-token',
      'IngressClass/haproxy',
    ]) {
      expect(kinds, expected).toContain(expected);
    }
  });

  it('every kustomization lists exactly the YAML files of its folder, and every component is a Component', () => {
    for (const dir of [MANIFESTS_DIR, ...componentDirs()]) {
      const kustomization = readKustomization(dir);
      const listed = [...kustomization.resources, ...kustomization.patches.map((p) => p.path)].sort();
      const present = readdirSync(dir)
        .filter((name) => /\.ya?ml$/.test(name) && name !== 'kustomization.yaml')
        .sort();
      expect(listed, relative(REPO_ROOT, dir)).toEqual(present);
      expect(kustomization.kind, relative(REPO_ROOT, dir)).toBe(dir === MANIFESTS_DIR ? 'Kustomization' : 'Component');
    }
  });

  it('a schema violation and an unknown field are both reported, naming the field', () => {
    const base = variants.find((v) => v.name === 'base');
    const deployment = base?.documents.find((d) => d.object.kind === 'Deployment')?.object;
    expect(deployment).toBeDefined();
    const broken = structuredClone(deployment) as unknown as { spec: { replicas: unknown; template: { spec: { containers: Record<string, unknown>[] } } } };
    broken.spec.replicas = 'two';
    broken.spec.template.spec.containers[0].readinessProbes = {};
    const errors = schemaErrors(broken as never);
    expect(errors.some((e) => e.includes('/spec/replicas'))).toBe(true);
    expect(errors).toContain('spec.template.spec.containers[0].readinessProbes: unknown field (V1Container has no such field)');
    expect(schemaErrors({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toEqual([
      'no schema for example.com/v1 Widget: add its kubernetes-models class to test/helpers/kube-schema.ts',
    ]);
  });
});

