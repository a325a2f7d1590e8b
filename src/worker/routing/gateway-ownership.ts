// Who owns a hostname across Ingress and HTTPRoute tenants: the one rule of Ingresses alone
// (host-owners.ts, in claimant.ts order: oldest creationTimestamp, then namespace/name). Claims
// are the hosts of our Ingresses' rules and the effective hostnames of attached HTTPRoutes (a
// route's hostnames after intersection with its listeners); a hostname goes to the namespace of
// its first claimant, and a route of another namespace loses it (with a warning), as does a
// wildcard `*.d` while another namespace holds a host one label under `d`, and such a host while
// another namespace holds the wildcard. Routes of the owning namespace share it. Hostname-less routes claim nothing: they answer only on the
// listener hostnames their Gateway's owner chose. Ingresses are not refused by HTTPRoute claims
// here: they are served on the Ingress frontends, which no Gateway listener may share.
import type { KubeObject } from '../protocol.js';
import { compareClaimants, creationTime, type Claimant } from './claimant.js';
import { HostOwners, type RouteCandidate } from './host-owners.js';
import { acceptsClass, classPolicy } from './ingress-class.js';
import type { ModelOptions } from './model.js';
import type { StoreReader } from './model-source.js';

export class HostOwnership {
  readonly #claims: RouteCandidate[] = [];
  #owners: HostOwners | undefined;
  readonly #options: ModelOptions;

  /** Our Ingresses' rule hosts, as claims (none without a reader). */
  constructor(reader: StoreReader | undefined, options: ModelOptions) {
    this.#options = options;
    if (reader === undefined) return;
    const policy = classPolicy(reader, options);
    for (const ingress of reader.list(options.stores.ingresses)) {
      if (!acceptsClass(ingress, policy)) continue;
      const claimant = claimantOf(ingress, 'Ingress');
      for (const rule of ((ingress.spec as { rules?: { host?: string }[] }).rules ?? [])) {
        if (typeof rule?.host === 'string' && rule.host !== '') this.claim(rule.host, claimant);
      }
    }
  }

  /** A new ownership with the claims made so far (this one is left as it is). */
  fork(): HostOwnership {
    const copy = new HostOwnership(undefined, this.#options);
    copy.#claims.push(...this.#claims);
    return copy;
  }

  /** Whether `other` holds the same claims, in the same order (both unforked: no `otherOwner` asked yet). */
  sameClaims(other: HostOwnership): boolean {
    const a = this.#claims;
    const b = other.#claims;
    return a.length === b.length && a.every((x, i) => {
      const y = b[i] as RouteCandidate;
      return x.host === y.host && x.owner === y.owner && x.namespace === y.namespace && x.created === y.created;
    });
  }

  /** Records a claim; every claim comes before the first `otherOwner`. */
  claim(host: string, claimant: Claimant): void {
    this.#claims.push({ ...claimant, host, path: '/', exact: false, backend: '' });
  }

  /** The claimant that keeps `namespace` from `host` (HostOwners' rule over every claim, oldest first), unless none does. */
  otherOwner(host: string, namespace: string): Claimant | undefined {
    if (this.#owners === undefined) {
      const owners = new HostOwners();
      for (const claim of this.#claims.sort(compareClaimants)) owners.claim(claim);
      this.#owners = owners;
    }
    return this.#owners.holderOf(host, namespace);
  }
}

export function claimantOf(object: KubeObject, kind: string): Claimant {
  const namespace = object.metadata.namespace ?? '';
  return { owner: `${kind} ${namespace}/${object.metadata.name}`, namespace, created: creationTime(object) };
}
