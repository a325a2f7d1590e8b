// Checks a Kubernetes object against the API schemas: kubernetes-models' validators (types,
// required fields, enums, formats), plus a check for fields the API does not know, which those
// validators let through (their schemas allow additional properties) and which `kubectl apply`
// with strict field validation refuses. The field tables come from @kubernetes/client-node's
// models. A kind missing from the table below is an error, never a silent pass.
import * as kube from '@kubernetes/client-node';
import { ValidatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { IngressClass, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { KubeObject } from './kube-manifests.js';

interface Schema {
  /** The kubernetes-models class: its `validate()` throws on a schema violation. */
  readonly model: new (data: never) => { validate(): void };
  /** The @kubernetes/client-node model holding the field table. */
  readonly fields: string;
}

const SCHEMAS: Readonly<Record<string, Schema>> = {
  'v1/Namespace': { model: Namespace, fields: 'V1Namespace' },
  'v1/ServiceAccount': { model: ServiceAccount, fields: 'V1ServiceAccount' },
  'v1/Secret': { model: Secret, fields: 'V1Secret' },
  'v1/Service': { model: Service, fields: 'V1Service' },
  'apps/v1/Deployment': { model: Deployment, fields: 'V1Deployment' },
  'policy/v1/PodDisruptionBudget': { model: PodDisruptionBudget, fields: 'V1PodDisruptionBudget' },
  'networking.k8s.io/v1/NetworkPolicy': { model: NetworkPolicy, fields: 'V1NetworkPolicy' },
  'networking.k8s.io/v1/IngressClass': { model: IngressClass, fields: 'V1IngressClass' },
  'rbac.authorization.k8s.io/v1/ClusterRole': { model: ClusterRole, fields: 'V1ClusterRole' },
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': { model: ClusterRoleBinding, fields: 'V1ClusterRoleBinding' },
  'rbac.authorization.k8s.io/v1/Role': { model: Role, fields: 'V1Role' },
  'rbac.authorization.k8s.io/v1/RoleBinding': { model: RoleBinding, fields: 'V1RoleBinding' },
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': { model: ValidatingWebhookConfiguration, fields: 'V1ValidatingWebhookConfiguration' },
};

/** The schema violations of an object, each naming the field; empty when it is valid. */
export function schemaErrors(object: KubeObject): string[] {
  const schema = SCHEMAS[`${object.apiVersion}/${object.kind}`];
  if (schema === undefined) return [`no schema for ${object.apiVersion} ${object.kind}: add its kubernetes-models class to test/helpers/kube-schema.ts`];
  const errors: string[] = [];
  try {
    new schema.model(object as never).validate();
  } catch (error) {
    errors.push(...String((error as Error).message).split(/,\s*(?=data)/));
  }
  unknownFields(object, schema.fields, '', errors);
  return errors;
}

interface Attribute {
  readonly baseName: string;
  readonly type: string;
}

type FieldTable = { getAttributeTypeMap(): Attribute[] };

const SCALARS = new Set(['string', 'number', 'boolean', 'Date', 'any', 'object', 'IntOrString']);

function unknownFields(value: unknown, type: string, path: string, errors: string[]): void {
  if (value === null || value === undefined || SCALARS.has(type)) return;
  const list = /^Array<(.+)>$/.exec(type);
  if (list !== null) {
    if (Array.isArray(value)) value.forEach((item, i) => unknownFields(item, list[1], `${path}[${i}]`, errors));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map !== null) {
    if (typeof value === 'object') for (const [key, item] of Object.entries(value)) unknownFields(item, map[1], `${path}.${key}`, errors);
    return;
  }
  const table = (kube as unknown as Record<string, FieldTable | undefined>)[type];
  if (table === undefined || typeof table.getAttributeTypeMap !== 'function') {
    errors.push(`${path || '(root)'}: no field table for type ${type}`);
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return; // a type error, reported by the validator
  const attributes = table.getAttributeTypeMap();
  for (const [key, item] of Object.entries(value)) {
    const attribute = attributes.find((a) => a.baseName === key);
    if (attribute === undefined) errors.push(`${path === '' ? '' : `${path}.`}${key}: unknown field (${type} has no such field)`);
    else unknownFields(item, attribute.type, path === '' ? key : `${path}.${key}`, errors);
  }
}
