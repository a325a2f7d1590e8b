// Writes one render to an output directory: the one-shot form of OutputDirectory, for `render`
// and the demo. Paths come from `outputPathsIn(root)`.
import { dirname } from 'node:path';
import type { AuxiliaryFiles } from '../../worker/protocol.js';
import { OutputDirectory, outputPathsIn, type OutputFiles, type WriteSummary } from './output-directory.js';

export { outputPathsIn, type OutputFiles } from './output-directory.js';

export async function writeRenderOutput(paths: OutputFiles, haproxyConfig: string, aux: AuxiliaryFiles): Promise<WriteSummary> {
  return new OutputDirectory(dirname(paths.configFile)).write(haproxyConfig, aux);
}

/** @deprecated the same as outputPathsIn; kept for callers of the first release. */
export const outputDirs = outputPathsIn;
/** @deprecated the same as OutputFiles. */
export type OutputDirs = OutputFiles;
