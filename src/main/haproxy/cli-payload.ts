// Commands with a payload, as HAProxy's CLI takes them (doc/management.txt of 2.6, "payload"): a
// first line ending in ` <<`, then the payload lines, then an empty line that ends the payload.
// HAProxy gathers the whole command (first line and payload) in one buffer of tune.bufsize
// (16 KiB by default); a command that does not fit makes it close the connection without running
// it. In prompt mode HAProxy prints `+ ` for every line it gathers, before the command's output.
import { checkCommandLine } from './cli-reply.js';

/** `<line> <<`, then `payload` one per line, then an empty line. */
export interface PayloadCommand {
  /** The first line, without the ` <<` that marks the payload. */
  readonly line: string;
  /** Non-empty lines, without line breaks: an empty line would end the payload early. */
  readonly payload: readonly string[];
}

/** What a batch sends: a one-line command, or a command with a payload. */
export type CliCommand = string | PayloadCommand;

/**
 * Largest payload command sent by default, first line and closing empty line included: 1 KiB below
 * the 16 KiB tune.bufsize. Measured on HAProxy 2.6.12: a command of 16,189 bytes runs, one of
 * 16,450 bytes closes the connection.
 */
export const DEFAULT_MAX_PAYLOAD_BYTES = 15 * 1024;

/** Bytes of the first line as sent (` <<` and its line break included). */
export function payloadHeadBytes(line: string): number {
  return Buffer.byteLength(line) + 4;
}

/** Bytes a payload line adds to its command (its line break included). */
export function payloadLineBytes(payloadLine: string): number {
  return Buffer.byteLength(payloadLine) + 1;
}

/** The command as sent, without its final line break: `<line> <<`, the payload lines, and the empty line that ends it. */
export function commandText(command: CliCommand): string {
  return typeof command === 'string' ? command : `${command.line} <<\n${command.payload.join('\n')}\n`;
}

/** The command's first line, for replies and errors. */
export function commandLine(command: CliCommand): string {
  return typeof command === 'string' ? command : `${command.line} << (${command.payload.length} lines)`;
}

/**
 * The command as sent (see commandText), after refusing one that would not be the one command it
 * says: a first line that is not one command (see checkCommandLine) or already ends in `<<`, a
 * payload with no line, an empty line, a line break, CR or NUL in one, or a whole command larger
 * than `maxPayloadBytes`.
 */
export function checkedCommandText(command: CliCommand, maxLineBytes: number, maxPayloadBytes: number): string {
  if (typeof command === 'string') {
    checkCommandLine(command, maxLineBytes);
    if (command.endsWith('<<')) throw new TypeError(`a HAProxy CLI command ending in '<<' starts a payload: ${JSON.stringify(command.slice(0, 200))}`);
    return command;
  }
  checkCommandLine(command.line, maxLineBytes);
  const at = JSON.stringify(command.line.slice(0, 200));
  if (command.line.endsWith('<<')) throw new TypeError(`payload command line already ends in '<<': ${at}`);
  if (command.payload.length === 0) throw new TypeError(`payload command without payload: ${at}`);
  for (const line of command.payload) {
    if (line === '' || line.includes('\n')) throw new TypeError(`a payload line must be one non-empty line: ${JSON.stringify(line.slice(0, 200))} in ${at}`);
  }
  const text = commandText(command);
  if (/[\r\0]/.test(text)) throw new TypeError(`a HAProxy CLI payload cannot contain CR or NUL: ${at}`);
  // The text, its line break, and the empty line that ends the payload.
  const bytes = Buffer.byteLength(text) + 1;
  if (bytes > maxPayloadBytes) throw new TypeError(`HAProxy CLI payload command of ${bytes} bytes exceeds the ${maxPayloadBytes}-byte limit: ${at}`);
  return text;
}

/** A payload command's output without the `+ ` prompts HAProxy printed while it gathered the payload. */
export function payloadOutput(output: string): string {
  return output.replace(/^(\+ )+/, '');
}
