// Runtime API operations: the changes a running HAProxy can take without a reload, as data. The
// config diff produces them; a DeployTarget turns them into Runtime API command lines with the
// functions below. Every value is escaped with `cliArg`, so a key or address can never start a
// second command (`;`) or a new line.
import { cliArg } from '../haproxy/cli-reply.js';
import { payloadHeadBytes, payloadLineBytes, type CliCommand } from '../haproxy/cli-payload.js';

/** `set server <backend>/<server> addr <address> port <port>` */
export interface ServerAddrOp {
  readonly type: 'server-addr';
  readonly backend: string;
  readonly server: string;
  /** An IP address, without brackets for IPv6. */
  readonly address: string;
  /** Absent when the server line names no port. */
  readonly port?: number;
}

/** `set server <backend>/<server> state ready|maint` (a slot enabled or disabled) */
export interface ServerStateOp {
  readonly type: 'server-state';
  readonly backend: string;
  readonly server: string;
  readonly state: 'ready' | 'maint';
}

/** `set server <backend>/<server> weight <weight>` */
export interface ServerWeightOp {
  readonly type: 'server-weight';
  readonly backend: string;
  readonly server: string;
  readonly weight: number;
}

/** `add map <file> <key> <value>`: appends an entry. `file` is the map's absolute path, as in the config. */
export interface MapAddOp {
  readonly type: 'map-add';
  readonly file: string;
  readonly key: string;
  readonly value: string;
}

/** `del map <file> <key>` */
export interface MapDelOp {
  readonly type: 'map-del';
  readonly file: string;
  readonly key: string;
}

/** `set map <file> <key> <value>`: changes the value in place (the entry keeps its position). */
export interface MapSetOp {
  readonly type: 'map-set';
  readonly file: string;
  readonly key: string;
  readonly value: string;
}

/**
 * The whole map replaced atomically, for large changes or when entry order must change:
 * `prepare map <file>` (HAProxy answers with a version), the entries in file order as
 * `add map @<version> <file> <<` payload commands (one `<k> <v>` per line; an entry a payload
 * line cannot carry as `add map @<version> <file> <k> <v>`), then `commit map @<version> <file>`
 * once every entry was accepted.
 */
export interface MapReplaceOp {
  readonly type: 'map-replace';
  readonly file: string;
  readonly entries: readonly (readonly [key: string, value: string])[];
}

export type ServerOp = ServerAddrOp | ServerStateOp | ServerWeightOp;
export type MapOp = MapAddOp | MapDelOp | MapSetOp;
export type RuntimeOp = ServerOp | MapOp | MapReplaceOp;

/** The one command line of a single-command operation (everything but `map-replace`). */
export function runtimeCommand(op: ServerOp | MapOp): string {
  switch (op.type) {
    case 'server-addr':
      return `set server ${cliArg(`${op.backend}/${op.server}`)} addr ${cliArg(op.address)}${op.port === undefined ? '' : ` port ${op.port}`}`;
    case 'server-state':
      return `set server ${cliArg(`${op.backend}/${op.server}`)} state ${op.state}`;
    case 'server-weight':
      return `set server ${cliArg(`${op.backend}/${op.server}`)} weight ${op.weight}`;
    case 'map-add':
      return `add map ${cliArg(op.file)} ${cliArg(op.key)} ${cliArg(op.value)}`;
    case 'map-del':
      return `del map ${cliArg(op.file)} ${cliArg(op.key)}`;
    case 'map-set':
      return `set map ${cliArg(op.file)} ${cliArg(op.key)} ${cliArg(op.value)}`;
    default:
      return unreachable(op);
  }
}

/** The first command of a `map-replace`; its reply carries the version the others need. */
export function prepareMapCommand(op: MapReplaceOp): string {
  return `prepare map ${cliArg(op.file)}`;
}

/** The version in HAProxy's reply to `prepare map` (`New version created: 7`). */
export function preparedMapVersion(reply: string): string {
  const match = /version created:\s*(\d+)/i.exec(reply);
  if (match === null) throw new Error(`unexpected reply to 'prepare map': ${JSON.stringify(reply.slice(0, 200))}`);
  return match[1] as string;
}

/**
 * The entry as a line of an `add map` payload, or undefined when a payload cannot carry it as it
 * is: HAProxy 2.6 reads the key up to the first blank, skips the blanks after it and takes the
 * rest of the line as the value, without escapes, and strips a final CR. So the key must be
 * non-empty without blanks, and the value non-empty, not starting with a blank.
 */
export function mapPayloadLine(key: string, value: string): string | undefined {
  return payloadEntry(key, value)?.[0];
}

// Printable ASCII: the usual entry, whose bytes are its length.
const ASCII_KEY = /^[\x21-\x7e]+$/;
const ASCII_VALUE = /^[\x21-\x7e][\x20-\x7e]*$/;

/** The payload line of an entry and its bytes with its line break, or undefined (see mapPayloadLine). */
function payloadEntry(key: string, value: string): [line: string, bytes: number] | undefined {
  if (ASCII_KEY.test(key) && ASCII_VALUE.test(value)) return [`${key} ${value}`, key.length + value.length + 2];
  if (key === '' || /[ \t\r\n\0]/.test(key)) return undefined;
  if (value === '' || /^[ \t]/.test(value) || /[\r\n\0]/.test(value)) return undefined;
  const line = `${key} ${value}`;
  return [line, payloadLineBytes(line)];
}

/**
 * The commands that add a `map-replace`'s entries to version `version`, in file order, and the
 * `commit map` that publishes them. Entries go in `add map @<version> <file> <<` payload
 * commands of at most `maxPayloadBytes` each (see RuntimeApi.maxPayloadBytes); an entry no
 * payload line can carry (mapPayloadLine), or too long for any payload, is one
 * `add map @<version> <file> <k> <v>` line between them.
 */
export function versionedMapCommands(op: MapReplaceOp, version: string, maxPayloadBytes: number): { readonly adds: CliCommand[]; readonly commit: string } {
  const file = cliArg(op.file);
  const head = `add map @${version} ${file}`;
  // The first line, and the empty line that ends the payload.
  const fixed = payloadHeadBytes(head) + 1;
  const adds: CliCommand[] = [];
  let payload: string[] = [];
  let bytes = fixed;
  const flush = (): void => {
    if (payload.length === 0) return;
    adds.push({ line: head, payload });
    payload = [];
    bytes = fixed;
  };
  for (const [key, value] of op.entries) {
    const entry = payloadEntry(key, value);
    if (entry === undefined || fixed + entry[1] > maxPayloadBytes) {
      flush();
      adds.push(`${head} ${cliArg(key)} ${cliArg(value)}`);
      continue;
    }
    if (bytes + entry[1] > maxPayloadBytes) flush();
    payload.push(entry[0]);
    bytes += entry[1];
  }
  flush();
  return { adds, commit: `commit map @${version} ${file}` };
}

/** Commands an operation takes, a map replacement's entries counted one each: what `applyRuntime` counts as applied. */
export function commandCount(op: RuntimeOp): number {
  return op.type === 'map-replace' ? op.entries.length + 2 : 1;
}

function unreachable(value: never): never {
  throw new Error(`unknown runtime operation ${JSON.stringify(value)}`);
}
