// A CliTransport that answers from a script instead of a socket, recording every request, so the
// Runtime API and master CLI clients are tested without HAProxy and without sleeping.
import { HaproxyCliError } from '../../../src/main/core/errors.js';
import type { CliTransport } from '../../../src/main/haproxy/cli-transport.js';

export type ScriptedAnswer = string | Error | ((request: string) => string | Error);

export class ScriptedTransport implements CliTransport {
  readonly socketPath = '/test/cli.sock';
  readonly requests: string[] = [];
  readonly #answers: ScriptedAnswer[];
  /** Answer given once the script is exhausted. */
  readonly #fallback: ScriptedAnswer | undefined;

  constructor(answers: ScriptedAnswer[], fallback?: ScriptedAnswer) {
    this.#answers = [...answers];
    this.#fallback = fallback;
  }

  async exchange(request: string): Promise<string> {
    this.requests.push(request);
    const next = this.#answers.shift() ?? this.#fallback;
    if (next === undefined) throw new Error(`unscripted request ${JSON.stringify(request)}`);
    const answer = typeof next === 'function' ? next(request) : next;
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

export function cliError(reason: 'connect' | 'closed' | 'timeout'): HaproxyCliError {
  return new HaproxyCliError('/test/cli.sock', reason, reason);
}

/** What HAProxy 2.6 prints for a prompt-mode session whose commands printed `outputs`. */
export function promptSession(outputs: readonly string[]): string {
  return `\n> \n> ${outputs.map((o) => (o === '' ? '\n> ' : `${o}\n\n> `)).join('')}`;
}
