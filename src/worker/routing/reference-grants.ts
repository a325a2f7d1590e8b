// ReferenceGrant: a reference from one namespace into another is allowed only when a grant in
// the target namespace names the referring kind and namespace (`from`) and the target kind, and
// either every object of it or this one by name (`to`). Deleting the grant stops the reference
// at the next render.
import type { StoreReader } from './model-source.js';

const GATEWAY_GROUP = 'gateway.networking.k8s.io';

interface GrantSpec {
  from: { group?: string; kind: string; namespace: string }[];
  to: { group?: string; kind: string; name?: string }[];
}

/** A grant in `to` lets objects of `fromKind` (Gateway API group) in `from` reference the core `toKind` object `name`. */
export function granted(reader: StoreReader, store: string, fromKind: string, from: string, toKind: string, to: string, name: string): boolean {
  return reader.fetch(store, [to]).some((grant) => {
    const spec = grant.spec as GrantSpec;
    return (
      spec.from.some((f) => (f.group ?? '') === GATEWAY_GROUP && f.kind === fromKind && f.namespace === from) &&
      spec.to.some((t) => (t.group ?? '') === '' && t.kind === toKind && (t.name === undefined || t.name === '' || t.name === name))
    );
  });
}
