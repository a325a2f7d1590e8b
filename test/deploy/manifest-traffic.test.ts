// How the shipped objects fit together: the LoadBalancer Service maps 80/443 onto the ports the
// render binds, every Service selects pods and names ports they declare, the agent port is open to
// the controller pods alone, the controller discovers exactly the HAProxy pods, each replicated
// Deployment has a PodDisruptionBudget and spreads across nodes, the admission webhook is wired to
// the controller's --webhook-addr, the IngressClass is the template set's, and no Secret holds a
// real secret.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { documentName, isRecord, manifestVariants, type ManifestDocument } from '../helpers/kube-manifests.js';
import { argsOf, containerPort, flagValue, listOf, podTemplateOf, portOfAddress, selects, type Fields, type PodTemplate } from '../helpers/kube-pods.js';

const variants = manifestVariants();
const base = variants.find((v) => v.name === 'base')?.documents ?? [];
const full = variants.reduce((a, b) => (b.name.length > a.name.length ? b : a)).documents;

const byKind = (documents: readonly ManifestDocument[], kind: string): ManifestDocument[] => documents.filter((d) => d.object.kind === kind);

interface Workload {
  readonly document: ManifestDocument;
  readonly template: PodTemplate;
  readonly container: Fields;
  readonly args: string[];
}

function workload(documents: readonly ManifestDocument[], subcommand: string): Workload {
  for (const document of byKind(documents, 'Deployment')) {
    const template = podTemplateOf(document.object);
    const container = template?.containers.find((c) => argsOf(c)[0] === subcommand);
    if (template !== undefined && container !== undefined) return { document, template, container, args: argsOf(container) };
  }
  throw new Error(`no Deployment runs ${subcommand}`);
}

/** Whether a NetworkPolicy port entry covers a port number (by number, or by a name the pod declares). */
function coversPort(entry: Fields, port: number, container: Fields): boolean {
  return entry.port === port || containerPort(container, entry.port) === port;
}

describe('traffic and wiring in deploy/kubernetes', () => {
  const controller = workload(base, 'run');
  const haproxy = workload(base, 'agent');

  it('maps the LoadBalancer ports 80 and 443 onto the HAProxy ports the render binds (--set httpPort / httpsPort)', () => {
    const services = byKind(base, 'Service').filter((d) => (d.object.spec as Fields).type === 'LoadBalancer');
    expect(services.length).toBe(1);
    const spec = services[0].object.spec as Fields;
    expect(selects(spec.selector, haproxy.template.labels)).toBe(true);
    const bound: Record<number, string> = { 80: 'httpPort', 443: 'httpsPort' };
    for (const [port, value] of Object.entries(bound)) {
      const entry = listOf(spec.ports).find((p) => p.port === Number(port));
      expect(entry, `Service port ${port}`).toBeDefined();
      const target = containerPort(haproxy.container, entry?.targetPort);
      expect(target, `${port} -> ${String(entry?.targetPort)}`).toBeGreaterThanOrEqual(1024);
      const rendered = controller.args.flatMap((a, i) => (controller.args[i - 1] === '--set' && a.startsWith(`${value}=`) ? [Number(a.split('=')[1])] : []));
      expect(rendered, `run --set ${value}=${String(target)}`).toEqual([target]);
    }
  });

  for (const variant of variants) {
    it(`${variant.name}: every Service selects pods of the set and targets ports they declare, and none exposes the agent port`, () => {
      const templates = variant.documents.flatMap((d) => {
        const template = podTemplateOf(d.object);
        return template === undefined ? [] : [template];
      });
      const agentPort = portOfAddress(flagValue(haproxy.args, '--listen'));
      for (const service of byKind(variant.documents, 'Service')) {
        const spec = service.object.spec as Fields;
        const selected = templates.filter((t) => selects(spec.selector, t.labels));
        expect(selected.length, `${documentName(service)} selects pods`).toBeGreaterThan(0);
        for (const port of listOf(spec.ports)) {
          for (const template of selected) {
            const target = template.containers.map((c) => containerPort(c, port.targetPort)).find((p) => p !== undefined);
            expect(target, `${documentName(service)} port ${String(port.port)} -> ${String(port.targetPort)}`).toBeDefined();
            if (template === haproxy.template) expect(target, `${documentName(service)} exposes the agent port`).not.toBe(agentPort);
          }
        }
      }
    });
  }

  it('lets the controller reach the agents on the port they listen on, and lets only the controller pods reach it', () => {
    const agentPort = portOfAddress(flagValue(haproxy.args, '--listen'));
    expect(agentPort).toBeDefined();
    expect(Number(flagValue(controller.args, '--agent-port'))).toBe(agentPort);
    const policies = byKind(base, 'NetworkPolicy').filter((d) => selects((d.object.spec as Fields).podSelector, haproxy.template.labels));
    expect(policies.length).toBeGreaterThan(0);
    let controllerAllowed = false;
    for (const policy of policies) {
      const spec = policy.object.spec as Fields;
      expect(spec.policyTypes, documentName(policy)).toContain('Ingress');
      for (const rule of listOf(spec.ingress)) {
        const ports = listOf(rule.ports);
        const reachesAgent = ports.length === 0 || ports.some((p) => coversPort(p, agentPort ?? -1, haproxy.container));
        if (!reachesAgent) continue;
        const from = listOf(rule.from);
        expect(from.length, `${documentName(policy)}: a rule opens the agent port to every peer`).toBeGreaterThan(0);
        for (const peer of from) {
          expect(Object.keys(peer), `${documentName(policy)}: only a podSelector in the namespace`).toEqual(['podSelector']);
          expect(selects(peer.podSelector, controller.template.labels), `${documentName(policy)}: the peer is the controller`).toBe(true);
          expect(selects(peer.podSelector, haproxy.template.labels), `${documentName(policy)}: the peer is not the HAProxy pods`).toBe(false);
        }
        controllerAllowed = true;
      }
      const open = listOf(spec.ingress).filter((r) => listOf(r.from).length === 0).flatMap((r) => listOf(r.ports));
      for (const traffic of ['http', 'https']) {
        const port = containerPort(haproxy.container, traffic) ?? -1;
        expect(open.some((p) => coversPort(p, port, haproxy.container)), `${traffic} (${port}) open to clients`).toBe(true);
      }
    }
    expect(controllerAllowed).toBe(true);
  });

  it('the controller discovers exactly the HAProxy pods, in their namespace', () => {
    const selector = flagValue(controller.args, '--haproxy-pods') ?? '';
    const labels = Object.fromEntries(selector.split(',').map((term) => term.split('=') as [string, string]));
    expect(Object.keys(labels).length).toBeGreaterThan(0);
    expect(selects({ matchLabels: labels }, haproxy.template.labels)).toBe(true);
    expect(selects({ matchLabels: labels }, controller.template.labels)).toBe(false);
    expect(flagValue(controller.args, '--haproxy-namespace')).toBe(haproxy.document.object.metadata.namespace);
  });

  it('every replicated Deployment has a PodDisruptionBudget that leaves one pod up, and spreads its pods across nodes', () => {
    for (const deployment of byKind(base, 'Deployment')) {
      const replicas = Number((deployment.object.spec as Fields).replicas ?? 1);
      if (replicas < 2) continue;
      const template = podTemplateOf(deployment.object);
      const budgets = byKind(base, 'PodDisruptionBudget').filter(
        (d) => d.object.metadata.namespace === deployment.object.metadata.namespace && selects((d.object.spec as Fields).selector, template?.labels ?? {}),
      );
      expect(budgets.length, `${documentName(deployment)}: one PodDisruptionBudget`).toBe(1);
      const spec = budgets[0].object.spec as Fields;
      expect(spec.maxUnavailable === 1 || (Number(spec.minAvailable) >= 1 && Number(spec.minAvailable) < replicas), documentName(budgets[0])).toBe(true);
      const antiAffinity = isRecord(template?.spec.affinity) ? (template.spec.affinity as Fields).podAntiAffinity : undefined;
      const terms = isRecord(antiAffinity)
        ? [...listOf(antiAffinity.requiredDuringSchedulingIgnoredDuringExecution), ...listOf(antiAffinity.preferredDuringSchedulingIgnoredDuringExecution).map((p) => p.podAffinityTerm as Fields)]
        : [];
      expect(
        terms.some((t) => t.topologyKey === 'kubernetes.io/hostname' && selects(t.labelSelector, template?.labels ?? {})),
        `${documentName(deployment)}: anti-affinity across nodes`,
      ).toBe(true);
    }
  });

  it('ships the IngressClass of the default template set: its class name and its controller', () => {
    const values = (parse(readFileSync(join(REPO_ROOT, 'templates', 'default.yaml'), 'utf8')) as { values: Record<string, unknown> }).values;
    const classes = byKind(base, 'IngressClass');
    expect(classes.map((d) => d.object.metadata.name)).toEqual([values.ingressClass]);
    expect((classes[0].object.spec as Fields).controller).toBe(values.controllerName);
  });

  it('ships no real secret: every Secret value is the placeholder', () => {
    const secrets = variants.flatMap((v) => byKind(v.documents, 'Secret'));
    expect(secrets.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      const values = [
        ...Object.values(isRecord(secret.object.stringData) ? secret.object.stringData : {}),
        ...Object.values(isRecord(secret.object.data) ? secret.object.data : {}).map((v) => Buffer.from(String(v), 'base64').toString()),
      ].map(String);
      expect(values.length, documentName(secret)).toBeGreaterThan(0);
      for (const value of values) {
        expect(value, documentName(secret)).toMatch(/^REPLACE-ME/);
        expect(value, documentName(secret)).not.toMatch(/PRIVATE KEY|[0-9a-f]{32}/i);
      }
    }
  });

  it('wires the validating webhook to /validate on the controller replicas, failing closed for Ingresses and leaving kube-system alone', () => {
    const webhooks = byKind(full, 'ValidatingWebhookConfiguration');
    expect(webhooks.length).toBe(1);
    const configuration = webhooks[0].object;
    const annotations = (configuration.metadata.annotations ?? {}) as Record<string, string>;
    expect(annotations['cert-manager.io/inject-ca-from']).toMatch(/^[a-z0-9-]+\/[a-z0-9-]+$/);
    const withWebhook = workload(full, 'run');
    const webhookPort = portOfAddress(flagValue(withWebhook.args, '--webhook-addr'));
    expect(webhookPort).toBeDefined();
    const entries = listOf(configuration.webhooks);
    expect(entries.length).toBeGreaterThan(0);
    for (const webhook of entries) {
      const name = String(webhook.name);
      expect(webhook.sideEffects, name).toBe('None');
      expect(webhook.admissionReviewVersions, name).toEqual(['v1']);
      expect(Number(webhook.timeoutSeconds), name).toBeLessThanOrEqual(5);
      const expressions = listOf((webhook.namespaceSelector as Fields | undefined)?.matchExpressions);
      expect(
        expressions.some((e) => e.key === 'kubernetes.io/metadata.name' && e.operator === 'NotIn' && Array.isArray(e.values) && e.values.includes('kube-system')),
        `${name}: kube-system excluded`,
      ).toBe(true);
      const reference = (webhook.clientConfig as Fields).service as Fields;
      expect(reference.path, name).toBe('/validate');
      const service = byKind(full, 'Service').find((d) => d.object.metadata.name === reference.name && d.object.metadata.namespace === reference.namespace);
      expect(service, `${name}: Service ${String(reference.namespace)}/${String(reference.name)}`).toBeDefined();
      const spec = service?.object.spec as Fields;
      expect(selects(spec.selector, withWebhook.template.labels), `${name}: the Service selects the controller`).toBe(true);
      const port = listOf(spec.ports).find((p) => p.port === (reference.port ?? 443));
      expect(containerPort(withWebhook.container, port?.targetPort), `${name}: the Service reaches --webhook-addr`).toBe(webhookPort);
    }
    const ingress = entries.filter((w) => listOf(w.rules).some((r) => Array.isArray(r.resources) && r.resources.includes('ingresses')));
    expect(ingress.length).toBe(1);
    expect(ingress[0].failurePolicy).toBe('Fail');
    expect(listOf(ingress[0].rules).flatMap((r) => r.operations as string[])).toEqual(expect.arrayContaining(['CREATE', 'UPDATE']));
    // HTTPRoutes and Gateways, the kinds the webhook checks besides Ingresses and Secrets, fail closed too.
    for (const resource of ['httproutes', 'gateways']) {
      const gatewayApi = entries.filter((w) => listOf(w.rules).some((r) => Array.isArray(r.resources) && r.resources.includes(resource)));
      expect(gatewayApi.length, resource).toBe(1);
      expect(gatewayApi[0].failurePolicy, resource).toBe('Fail');
      const rules = listOf(gatewayApi[0].rules).filter((r) => (r.resources as string[]).includes(resource));
      expect(rules.flatMap((r) => r.apiGroups as string[]), resource).toEqual(['gateway.networking.k8s.io']);
      expect(rules.flatMap((r) => r.apiVersions as string[]), resource).toContain('v1');
      expect(rules.flatMap((r) => r.operations as string[]), resource).toEqual(expect.arrayContaining(['CREATE', 'UPDATE']));
    }
  });
});
