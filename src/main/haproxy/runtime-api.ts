// RuntimeApi: a client of HAProxy's admin stats socket (the Runtime API), for the deployer's
// fast path (`set server`, `add map`, `del map`, ...). Every reply is checked: `[err]`, `Unknown
// command` and the like throw RuntimeCommandError with the command and HAProxy's reply, so a
// caller falls back to a reload instead of believing a change it never made. Runtime changes do
// not survive a reload: the files on disk must already say the same thing.
import { RuntimeCommandError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import { UnixSocketTransport, type CliTransport } from './cli-transport.js';
import { CliSession } from './cli-session.js';
import { SEVERITY_COMMAND, parsePromptReplies, parseSessionReplies, parseSingleReply, replyFailure, toReply, type CliReply } from './cli-reply.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, checkedCommandText, commandLine, payloadOutput, type CliCommand } from './cli-payload.js';

export { cliArg, type CliReply } from './cli-reply.js';
export type { CliCommand, PayloadCommand } from './cli-payload.js';

export interface RuntimeApiOptions {
  /** The admin socket: the template value `runtimeSocket` (`<out>/run/admin.sock` under HaproxyProcess). */
  readonly socketPath: string;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Per connection, connect to close. @default 10_000 */
  readonly timeoutMs?: number;
  /**
   * Longest command line accepted. HAProxy reads a request into one buffer of tune.bufsize (16 KiB
   * by default) and cuts what does not fit, so lines stay well below it. @default 4096
   */
  readonly maxLineBytes?: number;
  /**
   * Largest command with a payload (first line, payload and the empty line that ends it): HAProxy
   * gathers it in one tune.bufsize buffer and drops the connection when it does not fit.
   * Lower it for a config with a smaller tune.bufsize; 0 sends no payload commands.
   * @default 15360 (1 KiB below the default tune.bufsize)
   */
  readonly maxPayloadBytes?: number;
  /** Commands per connection in `sendBatch`, which bounds each reply and each timeout. @default 256 */
  readonly maxCommandsPerConnection?: number;
  /** Replaces the UNIX socket (tests); `sendBatch` then opens a connection per batch too. */
  readonly transport?: CliTransport;
  /**
   * `sendBatch` keeps one prompt-mode session open between batches (cli-session.ts) instead of a
   * connection per batch; `closeSession()` must then be called around every reload and restart.
   * @default true without a `transport`
   */
  readonly keepSession?: boolean;
}

export class RuntimeApi {
  readonly socketPath: string;
  readonly #transport: CliTransport;
  readonly #maxLineBytes: number;
  readonly #maxCommands: number;
  readonly #session: CliSession | undefined;
  /** Largest payload command `sendBatch` accepts: what builders of payload commands split at. */
  readonly maxPayloadBytes: number;

  constructor(options: RuntimeApiOptions) {
    this.socketPath = options.socketPath;
    this.#transport =
      options.transport ??
      new UnixSocketTransport({ socketPath: options.socketPath, ...(options.clock && { clock: options.clock }), timeoutMs: options.timeoutMs ?? 10_000 });
    this.#session =
      (options.keepSession ?? options.transport === undefined)
        ? new CliSession({ socketPath: options.socketPath, ...(options.clock && { clock: options.clock }), timeoutMs: options.timeoutMs ?? 10_000 })
        : undefined;
    this.#maxLineBytes = options.maxLineBytes ?? 4096;
    this.#maxCommands = options.maxCommandsPerConnection ?? 256;
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    if (!Number.isInteger(this.#maxCommands) || this.#maxCommands < 1) {
      throw new TypeError(`maxCommandsPerConnection must be a positive integer, got ${String(options.maxCommandsPerConnection)}`);
    }
    if (!Number.isInteger(this.maxPayloadBytes) || this.maxPayloadBytes < 0) {
      throw new TypeError(`maxPayloadBytes must be a non-negative integer, got ${String(options.maxPayloadBytes)}`);
    }
  }

  /**
   * One command on its own connection, as one non-interactive line
   * `set severity-output string; <command>`; HAProxy answers and closes.
   * @throws RuntimeCommandError when HAProxy reports a failure; HaproxyCliError when it cannot be reached.
   * @example await api.send(`set server ${cliArg('be/srv1')} state ready`)
   */
  async send(command: string, signal?: AbortSignal): Promise<CliReply> {
    checkedCommandText(command, this.#maxLineBytes, this.maxPayloadBytes);
    const raw = await this.#transport.exchange(`${SEVERITY_COMMAND}; ${command}\n`, signal);
    const output = parseSingleReply(raw, this.socketPath);
    if (replyFailure(output) !== undefined) throw new RuntimeCommandError(command, output);
    return toReply(command, output);
  }

  /**
   * Several commands, pipelined one per line (a payload command: its lines and the empty line
   * that ends it) in interactive (`prompt`) mode, up to
   * `maxCommandsPerConnection` per connection. Not joined with `;` on one line: there HAProxy
   * separates replies only by a blank line, which some 2.6 error messages omit, so one reply
   * could be read as another's. The prompt HAProxy prints after each command cannot go missing.
   *
   * Runtime commands are not transactional. HAProxy runs every command of a connection even
   * after one fails; the first failure then throws (with its batch `index` and how many commands
   * were `executed`) and later connections are not opened. The caller's remedy is a reload.
   */
  async sendBatch(commands: readonly CliCommand[], signal?: AbortSignal): Promise<CliReply[]> {
    const texts = commands.map((command) => checkedCommandText(command, this.#maxLineBytes, this.maxPayloadBytes));
    const replies: CliReply[] = [];
    for (let start = 0; start < commands.length; start += this.#maxCommands) {
      const chunk = commands.slice(start, start + this.#maxCommands);
      const lines = texts.slice(start, start + this.#maxCommands);
      const session = this.#session;
      const parsed =
        session === undefined
          ? parsePromptReplies(await this.#transport.exchange(['prompt', SEVERITY_COMMAND, ...lines, 'quit', ''].join('\n'), signal), chunk.length, this.socketPath)
          : parseSessionReplies(await session.exchange(`${lines.join('\n')}\n`, chunk.length, signal), chunk.length, this.socketPath);
      const outputs = parsed.map((output, i) => (typeof chunk[i] === 'string' ? output : payloadOutput(output)));
      const failed = outputs.findIndex((output) => replyFailure(output) !== undefined);
      if (failed >= 0) {
        throw new RuntimeCommandError(commandLine(chunk[failed] as CliCommand), outputs[failed] as string, start + failed, start + chunk.length);
      }
      chunk.forEach((command, i) => replies.push(toReply(commandLine(command), outputs[i] as string)));
    }
    return replies;
  }

  /**
   * Closes the session `sendBatch` keeps open: the next batch opens a new one. HaproxyProcess
   * calls it around every reload and restart, so no batch goes to a worker that was replaced.
   */
  closeSession(): void {
    this.#session?.close();
  }
}
