// Loads the shipped Kubernetes manifests (deploy/kubernetes) the way kustomize builds them: the
// base kustomization's resources, and the base with each combination of its optional components
// (their resources added, their JSON 6902 patches applied). Every document keeps the file it came
// from, so a failing check names the file and the object.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './cli-process.js';

export const MANIFESTS_DIR = join(REPO_ROOT, 'deploy', 'kubernetes');

export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

export interface ManifestDocument {
  /** Relative to the repository root. */
  readonly file: string;
  readonly object: KubeObject;
}

/** One JSON 6902 operation of a component's patch, with the file it is in. */
export interface PatchOperation {
  readonly file: string;
  readonly op: string;
  readonly path: string;
  readonly value?: unknown;
}

export interface Kustomization {
  /** The folder, relative to the repository root. */
  readonly dir: string;
  readonly kind: 'Kustomization' | 'Component';
  readonly resources: readonly string[];
  readonly components: readonly string[];
  readonly patches: readonly { readonly path: string; readonly target: PatchTarget }[];
}

export interface PatchTarget {
  readonly group?: string;
  readonly version?: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** A built set: the base, or the base with some components. */
export interface ManifestVariant {
  /** `base`, or `base+webhook+ingress-status`. */
  readonly name: string;
  readonly documents: readonly ManifestDocument[];
}

/** Every YAML document of a file, parsed strictly (a YAML error names the file and the line). */
export function parseManifestFile(path: string): unknown[] {
  const file = relative(REPO_ROOT, path);
  return parseAllDocuments(readFileSync(path, 'utf8'), { prettyErrors: true, strict: true, uniqueKeys: true })
    .map((document, index) => {
      if (document.errors.length > 0) throw new Error(`${file}: document ${index + 1}: ${document.errors.map((e) => e.message).join('; ')}`);
      return document.toJS({ maxAliasCount: 0 }) as unknown;
    })
    .filter((value) => value !== null && value !== undefined);
}

export function readKustomization(dir: string): Kustomization {
  const file = join(dir, 'kustomization.yaml');
  const [content, ...rest] = parseManifestFile(file);
  const where = relative(REPO_ROOT, file);
  if (rest.length > 0 || !isRecord(content)) throw new Error(`${where}: expected one mapping`);
  const kind = content.kind;
  if (kind !== 'Kustomization' && kind !== 'Component') throw new Error(`${where}: kind ${String(kind)} is neither Kustomization nor Component`);
  return {
    dir: relative(REPO_ROOT, dir),
    kind,
    resources: stringList(content.resources, `${where}: resources`),
    components: stringList(content.components, `${where}: components`),
    patches: (Array.isArray(content.patches) ? content.patches : []).map((patch: unknown, index) => {
      if (!isRecord(patch) || typeof patch.path !== 'string' || !isRecord(patch.target)) {
        throw new Error(`${where}: patches[${index}] needs a path and a target`);
      }
      const target = patch.target;
      if (typeof target.kind !== 'string' || typeof target.name !== 'string') throw new Error(`${where}: patches[${index}].target needs a kind and a name`);
      return { path: patch.path, target: target as unknown as PatchTarget };
    }),
  };
}

/** The folders below deploy/kubernetes holding a kustomization of kind Component. */
export function componentDirs(): string[] {
  return readdirSync(MANIFESTS_DIR)
    .map((name) => join(MANIFESTS_DIR, name))
    .filter((path) => statSync(path).isDirectory() && existsSync(join(path, 'kustomization.yaml')))
    .sort();
}

/** The documents of a kustomization's resources (files only: the shipped set has no remote bases). */
export function resourceDocuments(kustomization: Kustomization): ManifestDocument[] {
  return kustomization.resources.flatMap((resource) => {
    const path = join(REPO_ROOT, kustomization.dir, resource);
    const file = relative(REPO_ROOT, path);
    return parseManifestFile(path).map((object, index) => ({ file, object: asKubeObject(object, `${file}: document ${index + 1}`) }));
  });
}

/** The patch operations of a component, each with the target it applies to. */
export function patchOperations(kustomization: Kustomization): { target: PatchTarget; operations: PatchOperation[] }[] {
  return kustomization.patches.map(({ path, target }) => {
    const full = join(REPO_ROOT, kustomization.dir, path);
    const file = relative(REPO_ROOT, full);
    const [operations, ...rest] = parseManifestFile(full);
    if (rest.length > 0 || !Array.isArray(operations)) throw new Error(`${file}: a JSON 6902 patch is one list of operations`);
    return {
      target,
      operations: operations.map((operation: unknown, index) => {
        if (!isRecord(operation) || typeof operation.op !== 'string' || typeof operation.path !== 'string') {
          throw new Error(`${file}: operation ${index + 1} needs op and path`);
        }
        return { file, op: operation.op, path: operation.path, value: operation.value };
      }),
    };
  });
}

/** The base, then the base with every non-empty combination of the components. */
export function manifestVariants(): ManifestVariant[] {
  const base = readKustomization(MANIFESTS_DIR);
  const components = componentDirs().map(readKustomization);
  const variants: ManifestVariant[] = [];
  for (let mask = 0; mask < 1 << components.length; mask++) {
    const chosen = components.filter((_, i) => (mask & (1 << i)) !== 0);
    variants.push(buildVariant(base, chosen));
  }
  return variants;
}

function buildVariant(base: Kustomization, components: readonly Kustomization[]): ManifestVariant {
  const documents = [...resourceDocuments(base), ...components.flatMap(resourceDocuments)].map((d) => ({ file: d.file, object: structuredClone(d.object) }));
  for (const component of components) {
    for (const { target, operations } of patchOperations(component)) {
      const matches = documents.filter((d) => targets(target, d.object));
      if (matches.length !== 1) throw new Error(`${component.dir}: patch target ${target.kind}/${target.name} matches ${matches.length} objects, expected 1`);
      for (const operation of operations) applyOperation(matches[0].object, operation);
    }
  }
  const name = ['base', ...components.map((c) => c.dir.split('/').pop() ?? c.dir)].join('+');
  return { name, documents };
}

function targets(target: PatchTarget, object: KubeObject): boolean {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  return (
    target.kind === object.kind &&
    target.name === object.metadata.name &&
    (target.namespace === undefined || target.namespace === object.metadata.namespace) &&
    (target.group === undefined || target.group === group) &&
    (target.version === undefined || target.version === version)
  );
}

/** RFC 6902 `add` and `replace`; the parent of the path must exist, as kustomize requires. */
function applyOperation(object: KubeObject, operation: PatchOperation): void {
  const where = `${operation.file}: ${operation.op} ${operation.path}`;
  if (operation.op !== 'add' && operation.op !== 'replace') throw new Error(`${where}: only add and replace are supported here`);
  const segments = operation.path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = segments.pop();
  if (last === undefined) throw new Error(`${where}: the root cannot be patched`);
  let parent: unknown = object;
  for (const segment of segments) {
    parent = Array.isArray(parent) ? parent[Number(segment)] : isRecord(parent) ? parent[segment] : undefined;
    if (parent === undefined) throw new Error(`${where}: no ${segment} on the target`);
  }
  const value = structuredClone(operation.value);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error(`${where}: index ${last} is out of range`);
    parent.splice(index, operation.op === 'replace' ? 1 : 0, value);
  } else if (isRecord(parent)) {
    if (operation.op === 'replace' && !(last in parent)) throw new Error(`${where}: nothing to replace`);
    parent[last] = value;
  } else {
    throw new Error(`${where}: the parent is not an object or a list`);
  }
}

function asKubeObject(value: unknown, where: string): KubeObject {
  if (!isRecord(value) || typeof value.apiVersion !== 'string' || typeof value.kind !== 'string' || !isRecord(value.metadata) || typeof value.metadata.name !== 'string') {
    throw new Error(`${where}: not a Kubernetes object (apiVersion, kind and metadata.name are required)`);
  }
  return value as unknown as KubeObject;
}

function stringList(value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new Error(`${where}: expected a list of strings`);
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where a document came from, for messages: `deploy/kubernetes/x.yaml Deployment haptic-system/name`. */
export function documentName(document: ManifestDocument): string {
  const { kind, metadata } = document.object;
  return `${document.file} ${kind} ${metadata.namespace === undefined ? '' : `${metadata.namespace}/`}${metadata.name}`;
}

