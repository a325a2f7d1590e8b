// Who owns a hostname across Ingress and HTTPRoute tenants: the same first-claimant rule as for
// Ingresses alone (claimant.ts order: oldest creationTimestamp, then namespace/name). Claims
// are the hosts of our Ingresses' rules and the effective hostnames of attached HTTPRoutes (a
// route's hostnames after intersection with its listeners); a hostname goes to the namespace of
// its first claimant, and a route of another namespace loses it (with a warning). Routes of the
// owning namespace share it. Hostname-less routes claim nothing: they answer only on the
// listener hostnames their Gateway's owner chose. Ingresses are not refused by HTTPRoute claims
// here: they are served on the Ingress frontends, which no Gateway listener may share.
import type { KubeObject } from '../protocol.js';
import { compareClaimants, creationTime, type Claimant } from './claimant.js';
import { acceptsClass, classPolicy } from './ingress-class.js';
import type { ModelOptions } from './model.js';
import type { StoreReader } from './model-source.js';

export class HostOwnership {
  readonly #owners = new Map<string, Claimant>();

  /** Our Ingresses' rule hosts, as claims. */
  constructor(reader: StoreReader, options: ModelOptions) {
    const policy = classPolicy(reader, options);
    for (const ingress of reader.list(options.stores.ingresses)) {
      if (!acceptsClass(ingress, policy)) continue;
      const claimant = claimantOf(ingress, 'Ingress');
      for (const rule of ((ingress.spec as { rules?: { host?: string }[] }).rules ?? [])) {
        if (typeof rule?.host === 'string' && rule.host !== '') this.claim(rule.host, claimant);
      }
    }
  }

  claim(host: string, claimant: Claimant): void {
    const owner = this.#owners.get(host);
    if (owner === undefined || compareClaimants(claimant, owner) < 0) this.#owners.set(host, claimant);
  }

  /** The first claimant of `host`, unless it is of `namespace`. */
  otherOwner(host: string, namespace: string): Claimant | undefined {
    const owner = this.#owners.get(host);
    return owner === undefined || owner.namespace === namespace ? undefined : owner;
  }
}

export function claimantOf(object: KubeObject, kind: string): Claimant {
  const namespace = object.metadata.namespace ?? '';
  return { owner: `${kind} ${namespace}/${object.metadata.name}`, namespace, created: creationTime(object) };
}
