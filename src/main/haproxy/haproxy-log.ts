// HaproxyLog: turns a HAProxy process's stderr into log records. Lines are split, stripped of
// control characters (a config value echoed in an alert must not forge log lines or terminal
// escapes), cut to a bounded length, and rate-limited per window so a flood of warnings cannot
// monopolise the event loop. `[ALERT]` lines are kept (the last few) to explain a failed start or
// reload in the error itself.
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';

export interface HaproxyLogOptions {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Longest line logged; the rest is cut. @default 2048 */
  readonly maxLineLength?: number;
  /** Lines logged per window; the rest are counted and reported once. @default 200 */
  readonly maxLinesPerWindow?: number;
  /** @default 1000 */
  readonly windowMs?: number;
  /** Alert lines remembered for error messages. @default 20 */
  readonly keepAlerts?: number;
}

type Level = 'error' | 'warn' | 'info' | 'debug';

const PREFIX = /^\[(ALERT|WARNING|NOTICE)\]\s*\((\d+)\)\s*:\s?/;
const LEVELS: Readonly<Record<string, Level>> = { ALERT: 'error', WARNING: 'warn', NOTICE: 'info' };
// Every reload makes the old worker print one such WARNING per proxy (thousands with a large
// config); they are routine, not warnings for an operator.
const ROUTINE = /^(Proxy \S+ stopped \(cumulated conns|Stopping (frontend|backend|proxy) \S+ in 0 ms)/;

export class HaproxyLog {
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #maxLineLength: number;
  readonly #maxLines: number;
  readonly #windowMs: number;
  readonly #keepAlerts: number;
  /** Text after the last newline; never longer than maxLineLength (the excess is dropped). */
  #partial = '';
  #partialCut = false;
  #windowStart = Number.NEGATIVE_INFINITY;
  #windowLines = 0;
  #suppressed = 0;
  /** Alert lines with their sequence number, oldest first; at most keepAlerts. */
  readonly #alerts: { readonly seq: number; readonly text: string }[] = [];
  #alertSeq = 0;

  constructor(options: HaproxyLogOptions) {
    this.#logger = options.logger;
    this.#clock = options.clock;
    this.#maxLineLength = options.maxLineLength ?? 2048;
    this.#maxLines = options.maxLinesPerWindow ?? 200;
    this.#windowMs = options.windowMs ?? 1000;
    this.#keepAlerts = options.keepAlerts ?? 20;
  }

  /** Feeds a chunk of stderr. */
  write(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    const lines = text.split('\n');
    const last = lines.pop() as string;
    for (const piece of lines) {
      this.#line(this.#partial + piece, this.#partialCut);
      this.#partial = '';
      this.#partialCut = false;
    }
    this.#partial += last;
    if (this.#partial.length > this.#maxLineLength) {
      this.#partial = this.#partial.slice(0, this.#maxLineLength);
      this.#partialCut = true;
    }
  }

  /** Logs an unterminated last line (the process exited mid-line). */
  flush(): void {
    if (this.#partial !== '') this.#line(this.#partial, this.#partialCut);
    this.#partial = '';
    this.#partialCut = false;
  }

  /** A position in the alert stream; `alertsSince(mark)` returns what came after it. */
  mark(): number {
    return this.#alertSeq;
  }

  alertsSince(mark: number): string[] {
    return this.#alerts.filter((a) => a.seq > mark).map((a) => a.text);
  }

  #line(raw: string, cut: boolean): void {
    const clean = escapeControl(raw.replace(/\r$/, ''));
    if (clean.trim() === '') return;
    const text = clean.length > this.#maxLineLength || cut ? `${clean.slice(0, this.#maxLineLength)}…` : clean;
    const match = PREFIX.exec(text);
    const message = match === null ? text : text.slice(match[0].length);
    const level: Level = match === null ? 'warn' : ROUTINE.test(message) ? 'debug' : (LEVELS[match[1] as string] as Level);
    if (level === 'error') {
      this.#alerts.push({ seq: ++this.#alertSeq, text: message });
      if (this.#alerts.length > this.#keepAlerts) this.#alerts.shift();
    }
    // Lines the logger would drop anyway must not use up the rate limit.
    if (typeof this.#logger.isLevelEnabled === 'function' && !this.#logger.isLevelEnabled(level)) return;
    if (!this.#admit()) return;
    const fields = match === null ? { source: 'haproxy' } : { source: 'haproxy', haproxyPid: Number(match[2]) };
    this.#logger[level](fields, message);
  }

  /** Whether the rate limit lets one more line through; reports what the last window dropped. */
  #admit(): boolean {
    const now = this.#clock.monotonic();
    if (now - this.#windowStart >= this.#windowMs) {
      if (this.#suppressed > 0) this.#logger.warn({ source: 'haproxy', suppressed: this.#suppressed }, `${this.#suppressed} HAProxy log lines suppressed`);
      this.#windowStart = now;
      this.#windowLines = 0;
      this.#suppressed = 0;
    }
    if (this.#windowLines >= this.#maxLines) {
      this.#suppressed++;
      return false;
    }
    this.#windowLines++;
    return true;
  }
}

/** Control characters (tabs aside) as `\xNN`, so a line stays one harmless line. */
export function escapeControl(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
  });
}
