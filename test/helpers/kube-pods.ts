// Reading pod templates of the shipped manifests: their containers, the values of their flags,
// and their named ports.
import { isRecord, type KubeObject } from './kube-manifests.js';

export type Fields = Record<string, unknown>;

export interface PodTemplate {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly spec: Fields;
  readonly containers: readonly Fields[];
}

/** The pod template of a workload (Deployment, DaemonSet, StatefulSet), or undefined. */
export function podTemplateOf(object: KubeObject): PodTemplate | undefined {
  const template = isRecord(object.spec) && isRecord(object.spec.template) ? object.spec.template : undefined;
  if (template === undefined || !isRecord(template.spec)) return undefined;
  const metadata = isRecord(template.metadata) ? template.metadata : {};
  const containers = [template.spec.initContainers, template.spec.containers].flatMap((list) => (Array.isArray(list) ? list.filter(isRecord) : []));
  const labels = (isRecord(metadata.labels) ? metadata.labels : {}) as Record<string, string>;
  const annotations = (isRecord(metadata.annotations) ? metadata.annotations : {}) as Record<string, string>;
  return { labels, annotations, spec: template.spec, containers };
}

export function argsOf(container: Fields): string[] {
  return Array.isArray(container.args) ? container.args.map(String) : [];
}

/** The value given to `flag` (`--flag value` or `--flag=value`); undefined when absent. */
export function flagValue(args: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag) return args[i + 1];
    if (args[i].startsWith(`${flag}=`)) return args[i].slice(flag.length + 1);
  }
  return undefined;
}

/** The port of a `HOST:PORT` flag value. */
export function portOfAddress(address: string | undefined): number | undefined {
  const match = address === undefined ? null : /:(\d+)$/.exec(address);
  return match === null ? undefined : Number(match[1]);
}

export function listOf(value: unknown): Fields[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** The container port a probe or Service names, by name or by number; undefined when none matches. */
export function containerPort(container: Fields, port: unknown): number | undefined {
  const match = listOf(container.ports).find((p) => p.name === port || p.containerPort === port);
  return match === undefined ? undefined : Number(match.containerPort);
}

/** Whether a label selector's matchLabels all hold for the labels. */
export function selects(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  if (!isRecord(selector)) return false;
  const matchLabels = isRecord(selector.matchLabels) ? selector.matchLabels : isRecord(selector) && !('matchExpressions' in selector) ? selector : {};
  const entries = Object.entries(matchLabels);
  return entries.length > 0 && entries.every(([key, value]) => labels[key] === value);
}
