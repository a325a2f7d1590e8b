// The work derived from one auxiliary file's text alone: map entries, map issues, PEM summaries.
// The phases ask for it through this interface, so the pure functions compute it afresh
// (UNCACHED) while IncrementalValidator serves it from caches kept per text.
import { mapEntriesOf, mapIssuesOf, type LineIssue, type MapEntries } from './map-file.js';
import { scanPem, type PemSummary } from './pem.js';

/** Work derived from one auxiliary file's text alone: computed by the pure functions, cached by IncrementalValidator. */
export interface TextDerivations {
  mapEntries(text: string): MapEntries;
  mapIssues(text: string, patternOnly: boolean): readonly LineIssue[];
  pem(text: string): PemSummary;
}

export const UNCACHED: TextDerivations = { mapEntries: mapEntriesOf, mapIssues: mapIssuesOf, pem: scanPem };
