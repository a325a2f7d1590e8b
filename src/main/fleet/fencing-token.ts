// FencingToken: the (epoch, sequence) a leader stamps on every apply. The epoch grows with every
// leadership term across replicas (the Lease's leaseTransitions, or the process start time for a
// single replica); the sequence grows within a term and never repeats: it starts from the clock
// (microseconds), so a leader restarted under the same identity, whose Lease keeps its epoch,
// still sends sequences above those it sent before.
import type { Clock } from '../core/clock.js';

export interface Fence {
  readonly epoch: number;
  readonly sequence: number;
}

export class FencingToken {
  readonly #epoch: () => number;
  readonly #clock: Clock;
  #last = 0;

  constructor(epoch: () => number, clock: Clock) {
    this.#epoch = epoch;
    this.#clock = clock;
  }

  next(): Fence {
    this.#last = Math.max(this.#last + 1, Math.floor(this.#clock.now() * 1000));
    return { epoch: this.#epoch(), sequence: this.#last };
  }
}
