// Basic authentication (`auth-type: basic-auth`, `auth-secret`, `auth-realm`): the annotation
// values, the rule that ties them together (no secret without the type, no type without a
// secret, no Secret of another namespace: tenants never read each other's Secrets), and the
// users of the Secret, each a name and a crypt(3) hash in a format HAProxy's crypt accepts.
// Plain-text passwords, DES hashes and hashes that cost too much to check are refused; a bad
// user is left out, never let in.
import type { KubeObject } from '../../protocol.js';
import type { AuthUser } from '../model.js';
import { bad, isDnsLabel, isDnsSubdomain, ok, quotedTextProblem, type Parsed } from './values.js';

export interface SecretRef {
  /** Undefined: the Ingress's own namespace. */
  readonly namespace: string | undefined;
  readonly name: string;
}

export const DEFAULT_AUTH_REALM = 'Protected Content';
const MAX_REALM = 128;
const MAX_USERS = 1000;
const USER_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * HAProxy hashes a password with crypt(3) on every request with credentials (and once per user at
 * load), on its event loop, so the cost of one check is capped: SHA-crypt at 5,000 rounds (its
 * default when `rounds=` is absent) and bcrypt at cost 5, each 1.5 ms or less per check on a
 * 2-CPU host (see README). yescrypt is refused: its default parameters cost 18 ms per check.
 */
export const MAX_SHA_CRYPT_ROUNDS = 5000;
export const MAX_BCRYPT_COST = 5;

/**
 * The crypt(3) formats accepted, by prefix: MD5-crypt (fixed, cheap cost; weak, but what
 * `openssl passwd -1` writes), SHA-256-crypt, SHA-512-crypt and bcrypt, with the alphabet and
 * lengths glibc/libxcrypt write. `cost` reads the work factor for the cap. Anything else (plain
 * text, DES with its 8-character passwords, yescrypt, unknown schemes) is refused.
 */
const HASH_FORMATS: readonly { readonly name: string; readonly pattern: RegExp; readonly cost?: (match: RegExpExecArray) => string | null }[] = [
  { name: 'MD5-crypt ($1$)', pattern: /^\$1\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22}$/ },
  { name: 'SHA-256-crypt ($5$)', pattern: /^\$5\$(?:rounds=(\d{1,10})\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{43}$/, cost: shaRounds },
  { name: 'SHA-512-crypt ($6$)', pattern: /^\$6\$(?:rounds=(\d{1,10})\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}$/, cost: shaRounds },
  { name: 'bcrypt ($2a$, $2b$, $2y$)', pattern: /^\$2[aby]\$(\d\d)\$[./0-9A-Za-z]{53}$/, cost: bcryptCost },
];

function shaRounds(match: RegExpExecArray): string | null {
  if (match[1] === undefined) return null;
  const rounds = Number(match[1]);
  if (match[1].startsWith('0') || rounds < 1000) return `has rounds=${match[1]}; write 1000 to ${MAX_SHA_CRYPT_ROUNDS} (or leave rounds= out)`;
  return rounds > MAX_SHA_CRYPT_ROUNDS ? `has rounds=${rounds}, over the limit of ${MAX_SHA_CRYPT_ROUNDS} (HAProxy hashes every login attempt; create it with e.g. \`openssl passwd -6\`)` : null;
}

function bcryptCost(match: RegExpExecArray): string | null {
  const cost = Number(match[1]);
  if (cost < 4) return `has bcrypt cost ${match[1]}; write 04 to 0${MAX_BCRYPT_COST}`;
  return cost > MAX_BCRYPT_COST ? `has bcrypt cost ${cost}, over the limit of ${MAX_BCRYPT_COST} (HAProxy hashes every login attempt; create it with e.g. \`htpasswd -nbB -C ${MAX_BCRYPT_COST}\`)` : null;
}

export function parseAuthType(raw: string): Parsed<'basic-auth'> {
  return raw === 'basic-auth' ? ok('basic-auth') : bad('must be basic-auth (the only authentication type supported)');
}

/** `[namespace/]name` of a Secret. */
export function parseSecretRef(raw: string): Parsed<SecretRef> {
  const parts = raw.split('/');
  if (parts.length > 2) return bad('must be a Secret name, or namespace/name');
  const name = parts[parts.length - 1] as string;
  const namespace = parts.length === 2 ? (parts[0] as string) : undefined;
  if (namespace !== undefined && !isDnsLabel(namespace)) return bad(`names the namespace ${JSON.stringify(namespace)}, which is not a valid namespace`);
  if (!isDnsSubdomain(name)) return bad(`names ${JSON.stringify(name)}, which is not a valid Secret name`);
  return ok({ namespace, name });
}

/** The realm, written between double quotes on the `http-request auth` line. */
export function parseRealm(raw: string): Parsed<string> {
  if (raw.trim() === '') return bad('is empty');
  const problem = quotedTextProblem(raw, MAX_REALM);
  return problem === null ? ok(raw) : bad(problem);
}

/** Which crypt format a hash is in, or why it is refused. */
export function checkHash(hash: string): Parsed<string> {
  for (const format of HASH_FORMATS) {
    const match = format.pattern.exec(hash);
    if (match === null) continue;
    const problem = format.cost?.(match) ?? null;
    return problem === null ? ok(format.name) : bad(`is a ${format.name} hash that ${problem}`);
  }
  if (/^[./0-9A-Za-z]{13}$/.test(hash)) return bad('is a DES crypt hash (it reads only 8 characters of a password); use $5$, $6$ or $2b$');
  if (/^\$y\$|^\$gy\$|^\$7\$/.test(hash)) return bad('is a yescrypt or scrypt hash, which costs too much per login attempt (HAProxy hashes every one); use $5$, $6$ or $2b$');
  if (hash.startsWith('$')) return bad('is not a crypt(3) hash in a supported format ($1$, $5$, $6$, $2a$/$2b$/$2y$)');
  return bad('is not a crypt(3) hash (plain-text passwords are refused); create it with e.g. `openssl passwd -6`');
}

/**
 * Why the auth annotations of an object, taken together, would leave it open or reach into
 * another tenant, or null. `values` holds the canonical names (auth-type, auth-secret, ...).
 */
export function authProblem(values: ReadonlyMap<string, string>, namespace: string): string | null {
  const type = values.get('auth-type');
  const secret = values.get('auth-secret');
  if (type === undefined) {
    if (secret !== undefined || values.has('auth-realm')) {
      return 'auth-secret and auth-realm need auth-type: basic-auth; the Ingress is rejected rather than served without authentication';
    }
    return null;
  }
  if (secret === undefined) return 'auth-type: basic-auth needs auth-secret (the Secret of users and password hashes); the Ingress is rejected rather than served open';
  const ref = parseSecretRef(secret);
  if (ref.ok && ref.value.namespace !== undefined && ref.value.namespace !== namespace) {
    return `auth-secret names a Secret of namespace ${ref.value.namespace}; only Secrets of the Ingress's own namespace (${namespace}) may be used`;
  }
  return null;
}

/**
 * The users of an auth Secret (its accepted view: `stringData` is already merged into `data`),
 * sorted by name, and the problems of the entries left out. One trailing newline of a value is
 * dropped, as `kubectl create secret --from-file` leaves one.
 */
export function usersOfSecret(secret: KubeObject): { users: readonly AuthUser[]; problems: readonly string[] } {
  const data = (secret.data ?? {}) as Record<string, unknown>;
  const users: AuthUser[] = [];
  const problems: string[] = [];
  for (const name of Object.keys(data).sort()) {
    const value = data[name];
    if (!USER_NAME.test(name)) {
      problems.push(`user ${JSON.stringify(name)} is not a valid user name (letters, digits, '.', '_', '-'); left out`);
      continue;
    }
    const hash = typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8').replace(/\r?\n$/, '') : '';
    const format = checkHash(hash);
    if (!format.ok) {
      problems.push(`the password of user ${name} ${format.reason}; the user is left out`);
      continue;
    }
    if (users.length === MAX_USERS) {
      problems.push(`has more than ${MAX_USERS} users; the rest are left out`);
      break;
    }
    users.push(Object.freeze({ name, hash }));
  }
  return { users: Object.freeze(users), problems };
}
