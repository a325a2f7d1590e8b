// The HAProxy CLI's wire format, as pure functions: escaping arguments, checking a command line
// before it is sent, cutting a raw reply into one output per command, and telling a failure from
// a success. Observed on HAProxy 2.6.12 with `set severity-output string`: every message a command
// reports through the CLI's error path starts with `[err]: ` (or another syslog severity).
import { HaproxyCliError } from '../core/errors.js';

export type CliSeverity = 'emerg' | 'alert' | 'crit' | 'err' | 'warning' | 'notice' | 'info' | 'debug';

/** One command and what HAProxy printed for it, without the trailing blank line. */
export interface CliReply {
  readonly command: string;
  /** The `[severity]` prefix of the first line, when HAProxy gave one. */
  readonly severity: CliSeverity | undefined;
  readonly output: string;
}

/** Sent before every command so failures carry `[err]` instead of free text. */
export const SEVERITY_COMMAND = 'set severity-output string';

const SEVERITY = /^\[(emerg|alert|crit|err|warning|notice|info|debug)\]: ?/;
const FAILURE_SEVERITIES = new Set<CliSeverity>(['emerg', 'alert', 'crit', 'err']);
// HAProxy prints these through its usage/help path, which 2.6 tags `[info]`, not `[err]`.
const FAILURE_TEXT = /^(Unknown command|Permission denied|This command is restricted)/;

/**
 * One argument for a CLI line: spaces, tabs, semicolons and backslashes get a backslash (the CLI
 * splits words on blanks and commands on `;`), and so does a final `<`, so that no argument is
 * the word `<<` or ends a line with `<<` (either would start a payload). Line breaks cannot be
 * escaped and are refused.
 */
export function cliArg(value: string): string {
  if (/[\r\n\0]/.test(value)) throw new TypeError(`a HAProxy CLI argument cannot contain a line break or NUL: ${JSON.stringify(value)}`);
  return value.replace(/[\\ \t;]/g, (c) => `\\${c}`).replace(/<$/, '\\<');
}

/**
 * Refuses a command that would not be one command on one line: a line break (it would start a
 * second command, or a payload), an unescaped `;` (a second command whose reply would shift
 * every later one), or more than `maxBytes` (HAProxy's request buffer is tune.bufsize, 16 KiB
 * by default, and a longer line is cut, not refused).
 */
export function checkCommandLine(command: string, maxBytes: number): void {
  if (command.trim() === '') throw new TypeError('empty HAProxy CLI command');
  if (/[\r\n\0]/.test(command)) throw new TypeError(`a HAProxy CLI command is one line: ${JSON.stringify(command.slice(0, 200))}`);
  for (let i = 0; i < command.length; i++) {
    if (command[i] === '\\') i++;
    else if (command[i] === ';') {
      throw new TypeError(`unescaped ';' in HAProxy CLI command (send commands separately, or escape with cliArg): ${JSON.stringify(command.slice(0, 200))}`);
    }
  }
  const bytes = Buffer.byteLength(command);
  if (bytes > maxBytes) throw new TypeError(`HAProxy CLI command of ${bytes} bytes exceeds the ${maxBytes}-byte line limit`);
}

export function severityOf(output: string): CliSeverity | undefined {
  return SEVERITY.exec(output)?.[1] as CliSeverity | undefined;
}

/** The line that makes `output` a failure, or undefined when the command succeeded. */
export function replyFailure(output: string): string | undefined {
  for (const line of output.split('\n')) {
    const severity = severityOf(line);
    const message = line.replace(SEVERITY, '');
    if ((severity !== undefined && FAILURE_SEVERITIES.has(severity)) || FAILURE_TEXT.test(message)) return line;
  }
  return undefined;
}

export function toReply(command: string, output: string): CliReply {
  return { command, severity: severityOf(output), output };
}

/**
 * The reply to one non-interactive line `set severity-output string; <command>`: the severity
 * command prints an empty output (one blank line), then the command's output and a blank line.
 */
export function parseSingleReply(raw: string, socketPath: string): string {
  if (!raw.startsWith('\n')) {
    throw new HaproxyCliError(socketPath, 'protocol', `'${SEVERITY_COMMAND}' was not accepted: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  return trimOutput(raw.slice(1));
}

/**
 * Cuts the reply of an interactive session (`prompt`, `set severity-output string`, the
 * commands, `quit`, one per line) into the commands' outputs. In prompt mode HAProxy prints
 * `> ` at the start of a line after every command, so the prompts delimit the outputs even when
 * a command forgets its blank line (2.6's `set weight` error does). Without the prompt, two
 * replies could merge and shift every later one onto the wrong command.
 */
export function parsePromptReplies(raw: string, commandCount: number, socketPath: string): string[] {
  const segments: string[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw.startsWith('> ', i) && (i === 0 || raw[i - 1] === '\n')) {
      segments.push(raw.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  segments.push(raw.slice(start));
  // prompt, severity, the commands, then quit's empty output after the last prompt.
  const expected = commandCount + 3;
  if (segments.length !== expected) {
    throw new HaproxyCliError(
      socketPath,
      'protocol',
      `expected ${commandCount} replies, got ${Math.max(0, segments.length - 3)} (the session ended early or a reply contained a prompt)`,
    );
  }
  return segments.slice(2, 2 + commandCount).map(trimOutput);
}

/**
 * Cuts the reply of `commandCount` commands on a kept prompt-mode session (cli-session.ts): each
 * output followed by its prompt, the last prompt ending the text. Prompts count as in
 * parsePromptReplies; the text begins just after the previous prompt, which is no line start.
 */
export function parseSessionReplies(raw: string, commandCount: number, socketPath: string): string[] {
  const segments: string[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw.startsWith('> ', i) && i > 0 && raw[i - 1] === '\n') {
      segments.push(raw.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  if (segments.length !== commandCount || start !== raw.length) {
    throw new HaproxyCliError(socketPath, 'protocol', `expected ${commandCount} replies, got ${segments.length} (the session ended early or a reply contained a prompt)`);
  }
  return segments.map(trimOutput);
}

function trimOutput(text: string): string {
  return text.replace(/\n+$/, '');
}
