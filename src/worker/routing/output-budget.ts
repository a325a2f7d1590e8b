// The output budget the namespaces share. The render fails for everyone past
// `values.maxOutputBytes`, so what the Ingresses and HTTPRoutes add to it together (their
// estimated bytes, IngressEntry.outputBytes and RouteBudgetItem.outputBytes, plus the Ingresses'
// certificate files) may take TENANT_OUTPUT_SHARE of it.
// Past that, the namespace adding the most gives up its newest Ingress, again and again until
// the rest fit (namespace-shares.ts): many small Ingresses of one namespace, or its large
// certificates, cost that namespace its newest Ingresses, never everyone's render. The held
// claims of its rejected Ingresses (held-claims.ts) count too, and are given up the same way. A
// certificate file (`<namespace>_<secret>.pem`, one per Secret however many Ingresses name it)
// is counted once, for the oldest Ingress of the namespace naming it: the newest go first, so
// while that one is served the file is written, and once it is not, none naming it is.
import { DEFAULT_MAX_OUTPUT_BYTES, TENANT_OUTPUT_SHARE } from '../store/value-limits.js';
import { compareClaimants } from './claimant.js';
import type { HeldItem } from './held-claims.js';
import type { IngressEntry } from './ingress-entry.js';
import { EntryTally } from './entry-tally.js';
import { shedLargest } from './namespace-shares.js';
import type { RouteBudgetItem } from './route-budget.js';

type Item = IngressEntry | HeldItem | RouteBudgetItem;

export class OutputBudget {
  readonly #budget: number;
  /** The entries' own bytes, and (through its callbacks) the certificate files they name. */
  readonly #bytes = new EntryTally<IngressEntry>(
    (entry) => entry.outputBytes,
    (entry) => this.#claims(entry, false),
    (entry) => this.#claims(entry, true),
  );
  /** Per certificate file: the entries naming it, with the length of the first claim's PEM. */
  readonly #certs = new Map<string, Map<IngressEntry, number>>();
  /** Per certificate file: the bytes its payer (oldest claimant) adds. */
  readonly #paid = new Map<string, number>();
  readonly #touched = new Set<string>();
  #certBytes = 0;

  constructor(maxOutputBytes: number | undefined) {
    this.#budget = Math.floor((maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES) * TENANT_OUTPUT_SHARE);
  }

  /**
   * The entries left out this build (they contribute nothing), the held claims of rejected
   * Ingresses left out (their hosts are not held) and the HTTPRoutes left out (not served), each
   * with its warning.
   */
  shed(
    entries: readonly IngressEntry[],
    held: readonly HeldItem[] = [],
    routes: readonly RouteBudgetItem[] = [],
  ): { entries: Map<IngressEntry, string>; held: Map<HeldItem, string>; routes: Map<RouteBudgetItem, string> } {
    // What all ask for, kept per entry between builds: while it fits, nothing is left out.
    let asked = this.#bytes.update(entries) + this.#certificateBytes();
    for (const item of held) asked += item.outputBytes;
    for (const item of routes) asked += item.outputBytes;
    if (asked <= this.#budget) return { entries: new Map(), held: new Map(), routes: new Map() };
    return shedOutput(this.#budget, entries, held, routes);
  }

  /** Files an entry names, into or out of their claims. */
  #claims(entry: IngressEntry, came: boolean): void {
    for (const claim of entry.tls) {
      let claimants = this.#certs.get(claim.certName);
      if (came) {
        if (claimants === undefined) this.#certs.set(claim.certName, (claimants = new Map()));
        if (!claimants.has(entry)) claimants.set(entry, claim.pem.length);
      } else if (claimants !== undefined) {
        claimants.delete(entry);
        if (claimants.size === 0) this.#certs.delete(claim.certName);
      }
      this.#touched.add(claim.certName);
    }
  }

  /** The bytes of every certificate file, each paid by its oldest claimant (as sizesOf counts them). */
  #certificateBytes(): number {
    for (const certName of this.#touched) {
      let payer: IngressEntry | undefined;
      let bytes = 0;
      for (const [entry, pem] of this.#certs.get(certName) ?? []) {
        if (payer === undefined || compareClaimants(entry.claimant, payer.claimant) < 0) [payer, bytes] = [entry, pem];
      }
      this.#certBytes += bytes - (this.#paid.get(certName) ?? 0);
      if (payer === undefined) this.#paid.delete(certName);
      else this.#paid.set(certName, bytes);
    }
    this.#touched.clear();
    return this.#certBytes;
  }
}

/** What OutputBudget.shed decides, computed whole over every item (`budget`: the bytes the items share). */
export function shedOutput(
  budget: number,
  entries: readonly IngressEntry[],
  held: readonly HeldItem[] = [],
  routes: readonly RouteBudgetItem[] = [],
): { entries: Map<IngressEntry, string>; held: Map<HeldItem, string>; routes: Map<RouteBudgetItem, string> } {
  const left = { entries: new Map<IngressEntry, string>(), held: new Map<HeldItem, string>(), routes: new Map<RouteBudgetItem, string>() };
  const sizes = sizesOf(entries);
  const items: Item[] = held.length === 0 && routes.length === 0 ? [...entries] : [...entries, ...held, ...routes];
  const sizeOf = (item: Item): number => ('heldFor' in item || 'kind' in item ? item.outputBytes : (sizes.get(item) ?? item.outputBytes));
  const { shed, total } = shedLargest(items, budget, sizeOf, (item) => item.claimant);
  if (shed.length === 0) return left;
  const byNamespace = new Map<string, number>();
  for (const item of items) byNamespace.set(item.claimant.namespace, (byNamespace.get(item.claimant.namespace) ?? 0) + sizeOf(item));
  for (const item of shed) {
    const namespace = item.claimant.namespace;
    const why =
      `namespace ${namespace} would add about ${byNamespace.get(namespace) ?? 0} bytes to the output, the most of any namespace, ` +
      `and all ${routes.length === 0 ? 'Ingresses' : 'Ingresses and HTTPRoutes'} together about ${total}, over the ${budget} they share (values.maxOutputBytes x ${TENANT_OUTPUT_SHARE}); ` +
      `its newest ${routes.length === 0 ? 'Ingresses' : 'objects'} go first (this one adds about ${sizeOf(item)})`;
    if ('heldFor' in item) left.held.set(item, `${item.claimant.owner}: it is rejected, and its hosts are not held for it either: ${why}`);
    else if ('kind' in item) left.routes.set(item, `${item.claimant.owner}: it is not served: ${why}`);
    else left.entries.set(item, `${item.claimant.owner}: it is not served: ${why}`);
  }
  return left;
}

/** Entries that pay for certificate files: their bytes with the files of which they are the oldest claimant. */
function sizesOf(entries: readonly IngressEntry[]): Map<IngressEntry, number> {
  const payers = new Map<string, IngressEntry>();
  for (const entry of entries) {
    for (const claim of entry.tls) {
      const payer = payers.get(claim.certName);
      if (payer === undefined || compareClaimants(entry.claimant, payer.claimant) < 0) payers.set(claim.certName, entry);
    }
  }
  const sizes = new Map<IngressEntry, number>();
  for (const [certName, entry] of payers) {
    const claim = entry.tls.find((c) => c.certName === certName);
    sizes.set(entry, (sizes.get(entry) ?? entry.outputBytes) + (claim?.pem.length ?? 0));
  }
  return sizes;
}
