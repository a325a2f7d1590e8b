// Validator: the pure structural check of a rendered HAProxy configuration and its auxiliary
// files, run in render workers (and inline by the baseline executor) after every render.
// Phase 'validation' parses haproxy.cfg line by line: sections, keywords allowed per section,
// references between proxies, maps and files, server and bind lines. Phase 'auxiliary' checks
// the rendered maps, certificates and crt-lists themselves. No I/O, no events: data in, data out;
// HAProxy's own verdict (`haproxy -c`) stays with the render gate. This module is the public
// surface; the phases live in phases.ts, their parts in structure/, auxiliary/ and incremental/.
import type { AuxiliaryFiles } from '../protocol.js';
import type { ValidationReport } from './issue-sink.js';
import type { OutputPaths } from './paths.js';
import { checkAuxiliaryFiles, validateStructure } from './phases.js';

export { CONFIG_FILE, MAX_ERRORS_PER_PHASE, formatIssue, type ValidationIssue, type ValidationReport } from './issue-sink.js';
export type { OutputPaths } from './paths.js';
export { checkAuxiliaryFiles, validateStructure } from './phases.js';
export { IncrementalValidator } from './incremental/incremental-validator.js';

/** Structural HAProxy parse of `config` ("haproxy.cfg") plus auxiliary-file checks. Never throws. */
export function validateConfig(config: string, aux: AuxiliaryFiles, paths: OutputPaths): ValidationReport {
  const structure = validateStructure(config, aux, paths);
  const auxiliary = checkAuxiliaryFiles(aux, config, paths);
  return {
    errors: [...structure.errors, ...auxiliary.errors],
    warnings: [...structure.warnings, ...auxiliary.warnings],
  };
}
