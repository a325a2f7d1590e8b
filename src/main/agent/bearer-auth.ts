// Bearer-token check of the agent API. Both tokens are hashed first, so the comparison is constant
// time whatever their lengths, and the expected token is never compared byte by byte. A refused
// peer is logged once (by address, a bounded set), never with the token it sent.
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { sha256 } from '../../worker/render/sha256.js';

export class BearerAuth {
  readonly #expected: Buffer;
  readonly #logger: Logger;
  readonly #logged = new Set<string>();
  readonly #maxLogged: number;

  /** @param token the shared secret (`--token-file`), surrounding whitespace already trimmed. */
  constructor(token: string, logger: Logger, maxLogged = 1024) {
    if (token.length === 0) throw new TypeError('the agent token is empty');
    this.#expected = digest(token);
    this.#logger = logger;
    this.#maxLogged = maxLogged;
  }

  /** True when `authorization` is `Bearer <the token>`; a refusal is logged once per `peer`. */
  check(authorization: string | undefined, peer: string): boolean {
    const match = /^Bearer (.+)$/.exec(authorization ?? '');
    const ok = match !== null && timingSafeEqual(digest(match[1] as string), this.#expected);
    if (!ok && !this.#logged.has(peer)) {
      if (this.#logged.size >= this.#maxLogged) this.#logged.delete(this.#logged.values().next().value as string);
      this.#logged.add(peer);
      this.#logger.warn({ peer, reason: match === null ? 'no bearer token' : 'wrong token' }, 'agent API request refused (logged once per peer)');
    }
    return ok;
  }
}

function digest(text: string): Buffer {
  return Buffer.from(sha256(text, 'binary'), 'latin1');
}
