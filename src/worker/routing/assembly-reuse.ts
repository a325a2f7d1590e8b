// The cross-Ingress decisions of model-assembly.ts (TLS host owners, the default backend), given
// again without being computed again when what they read is unchanged. Both are pure functions of
// the claim sources that take part (those with TLS claims, those with a default backend), in input
// order, and, for the TLS hosts, of the host holders they ask about. A build where one Ingress
// changed a path hands them the same sources but one, whose claims are compared by content:
// then the last result and its warnings are given back, at the cost of a pointer walk over the
// sources and the holder questions asked last time, instead of sorting and mapping every claim.
import type { Claimant } from './claimant.js';
import { replayNotices, type Finding, type Notice, type Warn } from './findings.js';
import { assignTlsHosts, chooseDefaultBackend, type ClaimSource, type TlsAssignment, type TlsClaim } from './model-assembly.js';
import { replacedOnlyIdle } from '../store/list-replacements.js';

/** What a holder question was asked and answered in the last TLS assignment. */
interface HolderAnswer {
  readonly host: string;
  readonly namespace: string;
  readonly holder: string | undefined;
}

/** The last TLS assignment: its sources, their claimants and claims, its holder answers, result and warnings. */
interface TlsRun {
  readonly sources: readonly ClaimSource[];
  readonly claimants: readonly Claimant[];
  readonly claims: readonly (readonly TlsClaim[])[];
  /** Undefined when no holder was asked (no `hostHolder`). */
  readonly answers: readonly HolderAnswer[] | undefined;
  readonly result: TlsAssignment;
  readonly notices: readonly Notice[];
}

/** The last default backend choice: its sources, its candidates' claimants and backends, result and warnings. */
interface DefaultRun {
  readonly sources: readonly ClaimSource[];
  readonly claimants: readonly Claimant[];
  readonly backends: readonly string[];
  readonly result: string | undefined;
  readonly notices: readonly Notice[];
}

/** assignTlsHosts and chooseDefaultBackend with their last result kept; always what they give. */
export class AssemblyReuse {
  #tls: TlsRun | undefined;
  #default: DefaultRun | undefined;

  /** assignTlsHosts(sources, warn, hostHolder); the same result object while its inputs are unchanged. */
  assignTlsHosts(sources: readonly ClaimSource[], warn: Warn, hostHolder?: (host: string, namespace: string) => string | undefined): TlsAssignment {
    const kept = this.#tls;
    if (kept !== undefined && (kept.answers === undefined) === (hostHolder === undefined) && replacedOnlyIdle(sources, kept.sources, (source) => source.tls.length === 0) && sameAnswers(kept.answers, hostHolder)) {
      // The sources with TLS claims are the very ones of the last run: the same claimants and claims.
      this.#tls = { ...kept, sources };
      replayNotices(kept.notices, warn);
      return kept.result;
    }
    const claimants: Claimant[] = [];
    const claims: (readonly TlsClaim[])[] = [];
    for (const source of sources) {
      if (source.tls.length === 0) continue;
      claimants.push(source.claimant);
      claims.push(source.tls);
    }
    const last = this.#tls;
    if (last !== undefined && (last.answers === undefined) === (hostHolder === undefined) && sameClaimants(claimants, last.claimants) && sameClaimLists(claims, last.claims) && sameAnswers(last.answers, hostHolder)) {
      this.#tls = { ...last, sources, claimants, claims };
      replayNotices(last.notices, warn);
      return last.result;
    }
    const notices: Notice[] = [];
    const answers: HolderAnswer[] = [];
    const asked = hostHolder === undefined ? undefined : (host: string, namespace: string): string | undefined => {
      const holder = hostHolder(host, namespace);
      answers.push({ host, namespace, holder });
      return holder;
    };
    const result = assignTlsHosts(sources, collector(notices), asked);
    this.#tls = { sources, claimants, claims, answers: asked === undefined ? undefined : answers, result, notices };
    replayNotices(notices, warn);
    return result;
  }

  /** chooseDefaultBackend(sources, warn), replayed while the candidates are unchanged. */
  chooseDefaultBackend(sources: readonly ClaimSource[], warn: Warn): string | undefined {
    const kept = this.#default;
    if (kept !== undefined && replacedOnlyIdle(sources, kept.sources, (source) => source.defaultBackend === undefined)) {
      this.#default = { ...kept, sources };
      replayNotices(kept.notices, warn);
      return kept.result;
    }
    const claimants: Claimant[] = [];
    const backends: string[] = [];
    for (const source of sources) {
      if (source.defaultBackend === undefined) continue;
      claimants.push(source.claimant);
      backends.push(source.defaultBackend);
    }
    const last = this.#default;
    if (last !== undefined && sameClaimants(claimants, last.claimants) && sameStrings(backends, last.backends)) {
      this.#default = { ...last, sources, claimants };
      replayNotices(last.notices, warn);
      return last.result;
    }
    const notices: Notice[] = [];
    const result = chooseDefaultBackend(sources, collector(notices));
    this.#default = { sources, claimants, backends, result, notices };
    replayNotices(notices, warn);
    return result;
  }

  /** Forgets the last results (the next calls compute afresh). */
  clear(): void {
    this.#tls = undefined;
    this.#default = undefined;
  }
}

function collector(notices: Notice[]): Warn {
  return (message: string, finding?: Finding) => {
    notices.push(finding === undefined ? { message } : { message, finding });
  };
}

function sameClaimants(a: readonly Claimant[], b: readonly Claimant[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Claimant;
    const y = b[i] as Claimant;
    if (x !== y && (x.owner !== y.owner || x.namespace !== y.namespace || x.name !== y.name || x.created !== y.created)) return false;
  }
  return true;
}

function sameClaimLists(a: readonly (readonly TlsClaim[])[], b: readonly (readonly TlsClaim[])[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as readonly TlsClaim[];
    const y = b[i] as readonly TlsClaim[];
    if (x !== y && !sameClaims(x, y)) return false;
  }
  return true;
}

function sameClaims(a: readonly TlsClaim[], b: readonly TlsClaim[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as TlsClaim;
    const y = b[i] as TlsClaim;
    if (x !== y && (x.certName !== y.certName || x.pem !== y.pem || !sameStrings(x.hosts, y.hosts))) return false;
  }
  return true;
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether every holder question of the last run gets the same answer now. */
function sameAnswers(answers: readonly HolderAnswer[] | undefined, hostHolder: ((host: string, namespace: string) => string | undefined) | undefined): boolean {
  if (answers === undefined || hostHolder === undefined) return true;
  for (const { host, namespace, holder } of answers) if (hostHolder(host, namespace) !== holder) return false;
  return true;
}
