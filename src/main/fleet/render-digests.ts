// RenderDigests: the sha256 of each text of a render, computed once for the whole fleet. Every
// AgentTarget compares the same render's files with what its agent reported; hashing the config
// (megabytes at 10,000 Ingresses) once per agent would put the same work on the leader's main
// thread (the encoding) and its thread pool (the hash) N times over, between the answers of the
// agents to the runtime change before it. Keyed by the render's checksum (a runtime view's checksum
// too names its content), so only the few newest renders are kept.
import { sha256Off } from '../core/digest.js';

const KEPT_RENDERS = 4;

export class RenderDigests {
  /** Insertion order is age: the oldest render goes first. */
  readonly #renders = new Map<string, Map<string, Promise<string>>>();

  /** The sha256 (hex) of `text`, the file `path` of the render `checksum`. */
  of(checksum: string, path: string, text: string): Promise<string> {
    let digests = this.#renders.get(checksum);
    if (digests === undefined) {
      digests = new Map();
      this.#renders.set(checksum, digests);
      for (const old of this.#renders.keys()) {
        if (this.#renders.size <= KEPT_RENDERS) break;
        this.#renders.delete(old);
      }
    }
    let digest = digests.get(path);
    if (digest === undefined) {
      digest = sha256Off(text);
      digests.set(path, digest);
      // A failed hash is not kept: the next caller tries again.
      digest.catch(() => digests.delete(path));
    }
    return digest;
  }
}
