// CliSession: one interactive (`prompt` mode) session on HAProxy's admin socket, kept open between
// exchanges, so a runtime change costs one write and one read instead of a connect, HAProxy's
// accept and session setup, and a close. HAProxy prints `> ` at the start of a line after every
// command in prompt mode: an exchange of N commands ends at the Nth prompt. The session is
// opened with `prompt` and `set severity-output string` in front of its first exchange.
//
// It is dropped, and the next exchange opens a new one, whenever its state could be in doubt:
// after an error, a timeout, an abort, bytes arriving while no exchange runs, a reply that does
// not end at its last prompt, and `close()`, which the HaproxyProcess calls around every
// reload and restart (a session open on an old worker would change the old worker). It also
// closes itself after `idleMs` without an exchange, before HAProxy's own idle timeout
// (`stats timeout`, 10 s by default) could close it under a command. A session that closes
// during an exchange fails it with HaproxyCliError; the caller falls back to a reload, as for
// any runtime failure, and nothing is sent again.
import { createConnection, type Socket } from 'node:net';
import { HaproxyCliError } from '../core/errors.js';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.js';
import { SEVERITY_COMMAND } from './cli-reply.js';

export interface CliSessionOptions {
  readonly socketPath: string;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Per exchange, write to last prompt (a new session's connect included). @default 10_000 */
  readonly timeoutMs?: number;
  /** An idle session is closed after this long. @default 2_000 */
  readonly idleMs?: number;
  /** A reply larger than this fails and drops the session. @default 64 MiB */
  readonly maxReplyBytes?: number;
}

interface Pending {
  readonly prompts: number;
  readonly resolve: (raw: string) => void;
  readonly reject: (error: HaproxyCliError) => void;
}

interface Open {
  readonly socket: Socket;
  /** Prompts still to come for the session's setup commands (they are not part of any reply). */
  setupPrompts: number;
  chunks: string[];
  size: number;
  seen: number;
  /** Whether the text read so far ends a line (a prompt can start at the next byte). */
  atLineStart: boolean;
  pending: Pending | undefined;
}

export class CliSession {
  readonly socketPath: string;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #idleMs: number;
  readonly #maxReplyBytes: number;
  #open: Open | undefined;
  #idle: TimerHandle | undefined;
  #turn: Promise<unknown> = Promise.resolve();

  constructor(options: CliSessionOptions) {
    this.socketPath = options.socketPath;
    this.#clock = options.clock ?? systemClock;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#idleMs = options.idleMs ?? 2_000;
    this.#maxReplyBytes = options.maxReplyBytes ?? 64 * 1024 * 1024;
  }

  /** True while a session is open (tests, diagnostics). */
  get connected(): boolean {
    return this.#open !== undefined;
  }

  /**
   * Sends `request` (complete command lines, newline-terminated, expected to print `prompts`
   * prompts) and resolves with everything HAProxy wrote for it: each command's output followed
   * by its `> `. Exchanges run one at a time, in call order.
   */
  exchange(request: string, prompts: number, signal?: AbortSignal): Promise<string> {
    const run = this.#turn.then(() => this.#exchange(request, prompts, signal));
    this.#turn = run.catch(() => undefined);
    return run;
  }

  /** Drops the session (the next exchange opens a new one); an exchange under way fails. */
  close(): void {
    this.#drop(new HaproxyCliError(this.socketPath, 'closed', 'the session was closed'));
  }

  #exchange(request: string, prompts: number, signal: AbortSignal | undefined): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(new HaproxyCliError(this.socketPath, 'closed', 'aborted by the caller', { cause: signal.reason }));
        return;
      }
      this.#clock.clearTimeout(this.#idle);
      this.#idle = undefined;
      const fresh = this.#open === undefined;
      const open = this.#open ?? this.#connect();
      const onAbort = (): void => this.#drop(new HaproxyCliError(this.socketPath, 'closed', 'aborted by the caller', { cause: signal?.reason }));
      const timer = this.#clock.setTimeout(() => this.#drop(new HaproxyCliError(this.socketPath, 'timeout', `no complete reply within ${this.#timeoutMs} ms`)), this.#timeoutMs, { unref: true });
      const settle = (): void => {
        this.#clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // Referenced while an exchange runs; an idle session does not keep the process alive.
      open.socket.ref();
      open.pending = {
        prompts,
        resolve: (raw) => {
          settle();
          resolve(raw);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      open.socket.write(fresh ? `prompt\n${SEVERITY_COMMAND}\n${request}` : request);
    });
  }

  #connect(): Open {
    const socket = createConnection({ path: this.socketPath });
    const open: Open = { socket, setupPrompts: 2, chunks: [], size: 0, seen: 0, atLineStart: true, pending: undefined };
    this.#open = open;
    let connected = false;
    socket.setEncoding('utf8');
    socket.on('connect', () => (connected = true));
    socket.on('data', (text: string) => this.#onData(open, text));
    socket.on('end', () => this.#dropIf(open, new HaproxyCliError(this.socketPath, 'closed', 'HAProxy closed the session')));
    socket.on('close', () => this.#dropIf(open, new HaproxyCliError(this.socketPath, 'closed', 'HAProxy closed the session')));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.#dropIf(open, new HaproxyCliError(this.socketPath, connected ? 'closed' : 'connect', `${error.code ?? 'error'}: ${error.message}`, { cause: error }));
    });
    return open;
  }

  #onData(open: Open, text: string): void {
    const pending = open.pending;
    if (pending === undefined) {
      this.#dropIf(open, new HaproxyCliError(this.socketPath, 'protocol', 'HAProxy wrote while no command was pending'));
      return;
    }
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const lineStart = i === 0 ? open.atLineStart : text[i - 1] === '\n';
      if (!lineStart || text[i] !== '>' || text[i + 1] !== ' ') continue;
      if (open.setupPrompts > 0) {
        // The setup commands' outputs (empty) and prompts are no part of the reply.
        open.setupPrompts--;
        from = i + 2;
      } else open.seen++;
      i++;
    }
    open.atLineStart = text.endsWith('\n');
    const part = text.slice(from);
    open.size += part.length;
    if (open.size > this.#maxReplyBytes) {
      this.#dropIf(open, new HaproxyCliError(this.socketPath, 'reply-too-large', `reply larger than ${this.#maxReplyBytes} bytes`));
      return;
    }
    if (part !== '') open.chunks.push(part);
    if (open.seen < pending.prompts) return;
    const raw = open.chunks.join('');
    if (open.seen > pending.prompts || !raw.endsWith('> ')) {
      this.#dropIf(open, new HaproxyCliError(this.socketPath, 'protocol', `expected ${pending.prompts} replies, got more (a reply contained a prompt)`));
      return;
    }
    open.pending = undefined;
    open.chunks = [];
    open.size = 0;
    open.seen = 0;
    open.atLineStart = false;
    open.socket.unref();
    this.#idle = this.#clock.setTimeout(() => this.#dropIf(open, undefined), this.#idleMs, { unref: true });
    pending.resolve(raw);
  }

  #drop(error: HaproxyCliError): void {
    if (this.#open !== undefined) this.#dropIf(this.#open, error);
  }

  /** Ends `open` (when it is still the session) and fails its pending exchange with `error`. */
  #dropIf(open: Open, error: HaproxyCliError | undefined): void {
    if (this.#open !== open) return;
    this.#open = undefined;
    this.#clock.clearTimeout(this.#idle);
    this.#idle = undefined;
    open.socket.destroy();
    const pending = open.pending;
    open.pending = undefined;
    if (pending !== undefined) pending.reject(error ?? new HaproxyCliError(this.socketPath, 'closed', 'the session was closed'));
  }
}
