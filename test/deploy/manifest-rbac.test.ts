// The shipped RBAC grants what `run` needs and nothing more: no wildcard, no Secret write, no
// write to a tenant object apart from status subresources and Events, no built-in admin role;
// pods and the Lease only in their own namespace. Needs are read from the manifests (the
// controller's flags) and from the default template set's watchedResources.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { resourceLocation } from '../../src/main/sources/kubernetes/resource-paths.js';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { documentName, manifestVariants, type KubeObject, type ManifestDocument } from '../helpers/kube-manifests.js';
import { argsOf, flagValue, listOf, podTemplateOf, type Fields } from '../helpers/kube-pods.js';

const documents = manifestVariants().flatMap((v) => v.documents);
const objects = (kind: string): ManifestDocument[] => documents.filter((d) => d.object.kind === kind);
const RBAC_KINDS = ['ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding'];
const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection'];

interface Rule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** Every rule the manifests define, with the role and file it is in. */
function allRules(): { where: string; role: KubeObject; rule: Rule }[] {
  return [...objects('ClusterRole'), ...objects('Role')].flatMap((d) => listOf(d.object.rules).map((rule) => ({ where: documentName(d), role: d.object, rule: rule as unknown as Rule })));
}

/** Whether the ServiceAccount may `verb` the resource (optionally the one name) in `namespace` (undefined: all namespaces). */
function allowed(account: { namespace: string; name: string }, verb: string, group: string, resource: string, namespace: string | undefined, name?: string): boolean {
  const bound = (binding: KubeObject): boolean =>
    listOf(binding.subjects).some((s) => s.kind === 'ServiceAccount' && s.name === account.name && s.namespace === account.namespace);
  const roleOf = (binding: KubeObject): KubeObject | undefined => {
    const ref = binding.roleRef as Fields;
    const kind = String(ref.kind);
    return documents.find((d) => d.object.kind === kind && d.object.metadata.name === ref.name && (kind === 'ClusterRole' || d.object.metadata.namespace === binding.metadata.namespace))?.object;
  };
  const grants = (role: KubeObject | undefined): boolean =>
    listOf(role?.rules).some((r) => {
      const rule = r as unknown as Rule;
      return rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb) && (rule.resourceNames === undefined || (name !== undefined && rule.resourceNames.includes(name)));
    });
  const clusterWide = objects('ClusterRoleBinding').some((b) => bound(b.object) && grants(roleOf(b.object)));
  if (clusterWide) return true;
  if (namespace === undefined) return false;
  return objects('RoleBinding').some((b) => b.object.metadata.namespace === namespace && bound(b.object) && grants(roleOf(b.object)));
}

/** The controller: its ServiceAccount and its `run` flags. */
function controller(): { account: { namespace: string; name: string }; args: string[] } {
  const matches = objects('Deployment').flatMap((d) => {
    const template = podTemplateOf(d.object);
    const container = template?.containers.find((c) => argsOf(c)[0] === 'run');
    return template === undefined || container === undefined ? [] : [{ account: { namespace: String(d.object.metadata.namespace), name: String(template.spec.serviceAccountName) }, args: argsOf(container) }];
  });
  expect(matches.length).toBeGreaterThan(0);
  return matches[0];
}

describe('RBAC in deploy/kubernetes', () => {
  it('grants no wildcard verb, resource, API group or resource name', () => {
    const wildcards = allRules().filter(({ rule }) => [...rule.verbs, ...rule.resources, ...rule.apiGroups, ...(rule.resourceNames ?? [])].some((v) => v.includes('*')));
    expect(wildcards.map((w) => w.where)).toEqual([]);
    expect(allRules().length).toBeGreaterThan(5);
  });

  it('never lets anything write Secrets, escalate, bind, impersonate or use non-resource URLs', () => {
    for (const { where, rule } of allRules()) {
      if (rule.resources.includes('secrets')) expect(rule.verbs.filter((v) => WRITE_VERBS.includes(v)), where).toEqual([]);
      expect(rule.verbs.filter((v) => ['escalate', 'bind', 'impersonate'].includes(v)), where).toEqual([]);
      expect((rule as unknown as Fields).nonResourceURLs, where).toBeUndefined();
    }
  });

  it('writes only status subresources (update, patch), Events (create, patch) and Leases (create, update)', () => {
    const writableBy = (group: string, resource: string): readonly string[] =>
      resource.endsWith('/status')
        ? ['update', 'patch']
        : group === 'events.k8s.io' && resource === 'events'
          ? ['create', 'patch']
          : group === 'coordination.k8s.io' && resource === 'leases'
            ? ['create', 'update']
            : [];
    for (const { where, rule } of allRules()) {
      for (const verb of rule.verbs.filter((v) => WRITE_VERBS.includes(v))) {
        for (const group of rule.apiGroups) for (const resource of rule.resources) expect(writableBy(group, resource), `${where}: ${verb} ${group}/${resource}`).toContain(verb);
      }
    }
  });

  it('binds no built-in role, only roles the manifests define, and only to ServiceAccounts they define', () => {
    const accounts = new Set(objects('ServiceAccount').map((d) => `${d.object.metadata.namespace}/${d.object.metadata.name}`));
    for (const binding of [...objects('ClusterRoleBinding'), ...objects('RoleBinding')]) {
      const ref = binding.object.roleRef as Fields;
      expect(['cluster-admin', 'admin', 'edit', 'view'], documentName(binding)).not.toContain(ref.name);
      const defined = documents.some((d) => d.object.kind === ref.kind && d.object.metadata.name === ref.name && RBAC_KINDS.includes(d.object.kind));
      expect(defined, `${documentName(binding)}: roleRef ${String(ref.kind)}/${String(ref.name)}`).toBe(true);
      for (const subject of listOf(binding.object.subjects)) {
        expect(subject.kind, documentName(binding)).toBe('ServiceAccount');
        expect(accounts, documentName(binding)).toContain(`${String(subject.namespace)}/${String(subject.name)}`);
      }
    }
  });

  it('lets the controller list and watch every resource of the default template set, where run watches it', () => {
    const { account, args } = controller();
    const namespace = flagValue(args, '--namespace');
    const templateSet = parse(readFileSync(join(REPO_ROOT, 'templates', 'default.yaml'), 'utf8')) as { watchedResources: Record<string, { apiVersion: string; kind: string; resource?: string; namespaced?: boolean }> };
    const watched = Object.values(templateSet.watchedResources);
    expect(watched.length).toBeGreaterThan(3);
    for (const definition of watched) {
      const location = resourceLocation(definition, namespace);
      const group = definition.apiVersion.includes('/') ? definition.apiVersion.split('/')[0] : '';
      for (const verb of ['get', 'list', 'watch']) {
        expect(allowed(account, verb, group, location.resource, location.namespaced ? namespace : undefined), `${verb} ${group}/${location.resource}`).toBe(true);
      }
    }
  });

  it('lets the controller read the HAProxy pods and hold its Lease only in their own namespaces', () => {
    const { account, args } = controller();
    const podNamespace = flagValue(args, '--haproxy-namespace') ?? account.namespace;
    const leaseNamespace = flagValue(args, '--lease-namespace');
    const leaseName = flagValue(args, '--lease-name');
    expect(args).toContain('--leader-elect');
    expect(leaseNamespace).toBeDefined();
    expect(leaseName).toBeDefined();
    for (const verb of ['get', 'list', 'watch']) {
      expect(allowed(account, verb, '', 'pods', podNamespace), `${verb} pods in ${podNamespace}`).toBe(true);
      expect(allowed(account, verb, '', 'pods', 'some-tenant'), `${verb} pods elsewhere`).toBe(false);
    }
    expect(allowed(account, 'create', 'coordination.k8s.io', 'leases', leaseNamespace)).toBe(true);
    for (const verb of ['get', 'update']) {
      expect(allowed(account, verb, 'coordination.k8s.io', 'leases', leaseNamespace, leaseName), `${verb} lease ${String(leaseName)}`).toBe(true);
      expect(allowed(account, verb, 'coordination.k8s.io', 'leases', leaseNamespace, 'another-lease'), `${verb} another lease`).toBe(false);
      expect(allowed(account, verb, 'coordination.k8s.io', 'leases', 'some-tenant', leaseName), `${verb} the lease elsewhere`).toBe(false);
    }
    expect(allowed(account, 'delete', 'coordination.k8s.io', 'leases', leaseNamespace, leaseName)).toBe(false);
  });

  it('lets the controller write Ingress status and Events, read the published Service, and read Gateway API objects and write their status', () => {
    const { account } = controller();
    expect(allowed(account, 'update', 'networking.k8s.io', 'ingresses/status', undefined)).toBe(true);
    expect(allowed(account, 'update', 'networking.k8s.io', 'ingresses', undefined)).toBe(false);
    for (const verb of ['create', 'patch']) expect(allowed(account, verb, 'events.k8s.io', 'events', undefined), `${verb} events`).toBe(true);
    for (const verb of ['get', 'list', 'watch']) expect(allowed(account, verb, '', 'services', undefined), `${verb} services`).toBe(true);
    for (const resource of ['gatewayclasses', 'gateways', 'httproutes', 'referencegrants']) {
      for (const verb of ['get', 'list', 'watch']) expect(allowed(account, verb, 'gateway.networking.k8s.io', resource, undefined), `${verb} ${resource}`).toBe(true);
    }
    // The leader writes them with a merge patch of the status subresource (src/main/status/gateway-status-api.ts).
    for (const resource of ['gatewayclasses/status', 'gateways/status', 'httproutes/status']) {
      for (const verb of ['update', 'patch']) expect(allowed(account, verb, 'gateway.networking.k8s.io', resource, undefined), `${verb} ${resource}`).toBe(true);
    }
    for (const resource of ['gatewayclasses', 'gateways', 'httproutes', 'referencegrants', 'referencegrants/status']) {
      for (const verb of ['update', 'patch']) expect(allowed(account, verb, 'gateway.networking.k8s.io', resource, undefined), `${verb} ${resource}`).toBe(false);
    }
  });

  it('gives the HAProxy pods no API credential at all', () => {
    const haproxy = objects('Deployment').filter((d) => podTemplateOf(d.object)?.containers.some((c) => argsOf(c)[0] === 'agent'));
    expect(haproxy.length).toBeGreaterThan(0);
    for (const deployment of haproxy) {
      const spec = podTemplateOf(deployment.object)?.spec ?? {};
      expect(spec.automountServiceAccountToken, documentName(deployment)).toBe(false);
      const account = String(spec.serviceAccountName);
      expect(account, documentName(deployment)).not.toBe('default');
      const bindings = [...objects('ClusterRoleBinding'), ...objects('RoleBinding')].filter((b) => listOf(b.object.subjects).some((s) => s.name === account));
      expect(bindings.map(documentName), `bindings of ${account}`).toEqual([]);
    }
  });
});
