// Which chunks of the latest layout a new configuration shares with it, at either end: found
// from the common prefix and suffix of the two texts, with no pass over the chunks in between.
import { commonPrefix, commonSuffix } from '../../render/text-window.js';
import type { ChunkRecord } from './chunk-index.js';
import { cutsAt } from './chunking.js';

/** A chunk in a layout. */
export interface PlacedChunk {
  readonly record: ChunkRecord;
  /** Lines of the configuration before the chunk. */
  readonly offset: number;
}

/**
 * Which chunks of the latest layout (of text `old`) are chunks of `config` as they stand: the
 * first `head` ones, which end at `headEnd` inside the common prefix of the two texts with a cut
 * after them in `config`, and those from `tail` on, which start inside the common suffix on a line
 * start of `config` (at `tailStart` there). A cut depends only on its own line, and the lines of
 * those chunks are the same in both texts, so cutting `config` afresh finds them again. Costs a
 * few native comparisons of the two texts, and a look at the chunks at the two ends.
 */
export function sharedEnds(old: string, config: string, previous: readonly PlacedChunk[]): { head: number; headEnd: number; tail: number; tailStart: number } | undefined {
  if (previous.length === 0) return undefined;
  const prefix = commonPrefix(old, config);
  const suffix = commonSuffix(old, config, Math.min(old.length, config.length) - prefix);
  let head = 0;
  let headEnd = 0;
  while (head < previous.length) {
    const text = (previous[head] as PlacedChunk).record.text;
    const end = headEnd + text.length;
    if (end > prefix) break;
    // The next line is the same in both texts when it ends inside the prefix; else look at it.
    const next = previous[head + 1]?.record.headLength;
    const same = next !== undefined && end + next < prefix;
    if (!same && !(end === config.length || (text.charCodeAt(text.length - 1) === 10 && cutsAt(config, end)))) break;
    headEnd = end;
    head++;
  }
  const shift = config.length - old.length;
  const common = old.length - suffix;
  let tail = previous.length;
  let start = old.length;
  while (tail > head) {
    const at = start - (previous[tail - 1] as PlacedChunk).record.text.length;
    if (at < common || at + shift < headEnd) break;
    if (at + shift > 0 && config.charCodeAt(at + shift - 1) !== 10) break;
    // The first chunk may hold text before any section: it is a chunk only at the very start.
    if (at === 0 && shift !== 0) break;
    start = at;
    tail--;
  }
  return { head, headEnd, tail, tailStart: tail < previous.length ? start + shift : -1 };
}
