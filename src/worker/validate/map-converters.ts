// Map converters inside sample expressions (`%[req.hdr(host),lower,map(/m/host.map,be_404)]`):
// the map file they read, their default, and whether their output is a backend name. Phase
// 'validation' checks the map paths and the backends they route to; phase 'auxiliary' learns
// which maps are real maps rather than ACL pattern files.
import { MAP_MATCH_KINDS, MAP_OUTPUT_TYPES } from './keywords.js';

/** A map converter found in a sample expression: `map_beg(<path>[,<default>])`. */
export interface MapConverter {
  readonly name: string;
  readonly path: string;
  readonly defaultValue: string | undefined;
  /** The converter's output is the whole expression (`%[...,map(...)]` and nothing after). */
  readonly isWholeExpression: boolean;
  /** The converter returns strings (not `map_*_int` / `map_*_ip`) and no `\1` references. */
  readonly outputsString: boolean;
}

/**
 * Finds map converters in one word, e.g. `%[req.hdr(host),lower,map(/m/host.map,be_404)]`.
 * Linear scan with indexOf; converter arguments end at the first unnested `)`.
 */
export function findMapConverters(word: string, out: MapConverter[]): void {
  out.length = 0;
  let at = word.indexOf(',map');
  while (at >= 0) {
    let j = at + 4;
    while (j < word.length) {
      const c = word.charCodeAt(j);
      if (!((c >= 97 && c <= 122) || c === 95)) break;
      j++;
    }
    const name = word.slice(at + 1, j);
    if (word[j] === '(' && isMapConverterName(name)) {
      let depth = 0;
      let close = -1;
      let comma = -1;
      for (let k = j + 1; k < word.length; k++) {
        const c = word[k];
        if (c === '(') depth++;
        else if (c === ')') {
          if (depth === 0) {
            close = k;
            break;
          }
          depth--;
        } else if (c === ',' && depth === 0 && comma < 0) comma = k;
      }
      if (close < 0) return;
      const path = unquoteArg(word.slice(j + 1, comma < 0 ? close : comma));
      const defaultValue = comma < 0 ? undefined : unquoteArg(word.slice(comma + 1, close));
      const output = name.split('_')[2];
      out.push({
        name,
        path,
        defaultValue,
        isWholeExpression: word.startsWith('%[') && close === word.length - 2 && word.endsWith(']'),
        outputsString: (output === undefined || output === 'str') && name !== 'map_regm',
      });
      j = close;
    }
    at = word.indexOf(',map', j);
  }
}

function isMapConverterName(name: string): boolean {
  if (name === 'map') return true;
  const parts = name.split('_');
  if (parts.length < 2 || parts.length > 3 || parts[0] !== 'map') return false;
  if (!MAP_MATCH_KINDS.has(parts[1] ?? '')) return false;
  return parts.length === 2 || MAP_OUTPUT_TYPES.has(parts[2] ?? '');
}

/** A converter or action argument without its surrounding quotes. */
export function unquoteArg(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))) {
    return t.slice(1, -1);
  }
  return t;
}
