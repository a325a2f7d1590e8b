// An OutputDirectory that reports each config it has written, so the soak can tell when the
// output is current again after the directory was unwritable (an output fault's recovery).
import type { AuxiliaryFiles } from '../../../worker/protocol.js';
import { OutputDirectory, type WriteSummary } from '../../output/output-directory.js';

export class ObservedOutputDirectory extends OutputDirectory {
  readonly #written: (haproxyConfig: string) => void;
  /** The newest write, settled or not; writes are serialised, so it settles last. */
  #latest: Promise<unknown> = Promise.resolve();

  constructor(root: string, written: (haproxyConfig: string) => void) {
    super(root);
    this.#written = written;
  }

  override write(haproxyConfig: string, aux: AuxiliaryFiles): Promise<WriteSummary> {
    const writing = super.write(haproxyConfig, aux).then((summary) => {
      this.#written(haproxyConfig);
      return summary;
    });
    this.#latest = writing.catch(() => undefined);
    return writing;
  }

  /**
   * Resolves once every write begun so far has settled. The engine does not wait for a write
   * under way when leadership ends, so the directory may be removed only after this.
   */
  idle(): Promise<void> {
    return this.#latest.then(() => undefined);
  }
}
