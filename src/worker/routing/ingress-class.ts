// Which Ingresses are ours. Our classes: `values.ingressClass` always, plus every IngressClass
// whose `spec.controller` is `values.controllerName`. An Ingress names its class with
// `spec.ingressClassName` or the legacy `kubernetes.io/ingress.class` annotation; one without a
// class is ours when `watchIngressWithoutClass` is set or one of our classes is the default class
// (`ingressclass.kubernetes.io/is-default-class: "true"`).
import type { KubeObject } from '../protocol.js';
import type { ModelOptions } from './model.js';
import type { StoreReader } from './model-source.js';

export const LEGACY_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
export const DEFAULT_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';

export interface ClassPolicy {
  /** Names of our classes. */
  readonly classes: ReadonlySet<string>;
  /** Whether Ingresses without a class are ours. */
  readonly classless: boolean;
  /** Equal keys mean equal policies: the builder re-filters Ingresses only when it changes. */
  readonly key: string;
}

/** The class policy given the IngressClass objects the reader holds (a cluster has a handful). */
export function classPolicy(reader: StoreReader, options: ModelOptions): ClassPolicy {
  const classes = new Set([options.ingressClass]);
  let isDefault = false;
  for (const object of reader.list(options.stores.ingressClasses)) {
    const controller = (object.spec as { controller?: unknown } | undefined)?.controller;
    if (controller !== options.controllerName) continue;
    classes.add(object.metadata.name);
    if (object.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true') isDefault = true;
  }
  const classless = options.watchIngressWithoutClass || isDefault;
  return { classes, classless, key: `${classless ? 1 : 0}\0${[...classes].sort().join('\0')}` };
}

/** The class an Ingress names, or undefined when it names none. */
export function classOf(ingress: KubeObject): string | undefined {
  const named = (ingress.spec as { ingressClassName?: unknown } | undefined)?.ingressClassName;
  if (typeof named === 'string' && named !== '') return named;
  const legacy = ingress.metadata.annotations?.[LEGACY_CLASS_ANNOTATION];
  return legacy === undefined || legacy === '' ? undefined : legacy;
}

export function acceptsClass(ingress: KubeObject, policy: ClassPolicy): boolean {
  const cls = classOf(ingress);
  return cls === undefined ? policy.classless : policy.classes.has(cls);
}
