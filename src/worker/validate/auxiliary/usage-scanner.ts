// The first step of phase 'auxiliary': how the configuration uses the rendered files, found
// without a full parse. The scanner writes UsageOps per text; they depend on that text and on
// the rendered directories only, never on the lines before it, so IncrementalValidator reuses
// them per chunk while the directories stay the same. UsageState replays them.
import { posix } from 'node:path';
import { describe } from '../issue-sink.js';
import { findMapConverters, type MapConverter } from '../map-converters.js';
import { stripSlash, type PathResolver, type OutputPaths } from '../paths.js';
import { tokenizeLine } from '../tokenizer.js';

/** One usage fact of a config line; `crt` and `ca` paths are resolved at replay, against the bases of that point. */
export type UsageOp =
  | { readonly u: 'crt-base' | 'ca-base'; readonly value: string | null }
  | { readonly u: 'map'; readonly name: string; readonly how: 'pattern' | 'map' }
  | { readonly u: 'crt' | 'crt-list' | 'ca'; readonly raw: string }
  | { readonly u: 'throw'; readonly message: string };

/**
 * Finds how the config references rendered files without a full parse: only lines naming a
 * rendered directory, `crt*` or `ca-*` are tokenized (relative crt paths carry no directory).
 * The ops depend on the text and on the rendered directories (the needles, map paths).
 */
export class UsageScanner {
  readonly #needles: readonly string[];
  readonly #resolver: PathResolver;
  readonly #words: string[] = [];
  readonly #converters: MapConverter[] = [];

  constructor(paths: OutputPaths, resolver: PathResolver) {
    this.#needles = [paths.mapsDir, paths.filesDir, paths.certsDir, 'crt', 'ca-'].filter((n) => n !== '');
    this.#resolver = resolver;
  }

  scan(text: string): readonly UsageOp[] {
    const ops: UsageOp[] = [];
    try {
      const needles = this.#needles;
      let pos = 0;
      while (pos < text.length) {
        let end = text.indexOf('\n', pos);
        if (end < 0) end = text.length;
        const line = text.slice(pos, end);
        pos = end + 1;
        if (needles.some((n) => line.indexOf(n) >= 0)) this.#line(line, ops);
      }
    } catch (err) {
      ops.push({ u: 'throw', message: describe(err) });
    }
    return ops;
  }

  #line(line: string, ops: UsageOp[]): void {
    const w = this.#words;
    if (tokenizeLine(line, w) !== null || w.length === 0) return;
    if (w[0] === 'crt-base' || w[0] === 'ca-base') {
      ops.push({ u: w[0], value: w[1] === undefined ? null : stripSlash(posix.normalize(w[1])) });
    }
    for (let i = 0; i < w.length; i++) {
      const word = w[i] as string;
      const next = w[i + 1];
      if (word.indexOf(',map') >= 0) {
        findMapConverters(word, this.#converters);
        for (const conv of this.#converters) {
          const r = this.#resolver.resolve(conv.path, null);
          if (r.where === 'inside' && r.dir === 'maps') ops.push({ u: 'map', name: r.name, how: 'map' });
        }
        continue;
      }
      if (next === undefined) continue;
      if (word === '-f') {
        const r = this.#resolver.resolve(next, null);
        if (r.where === 'inside' && r.dir === 'maps') ops.push({ u: 'map', name: r.name, how: 'pattern' });
      } else if (word === 'crt' || word === 'crt-list') {
        ops.push({ u: word, raw: next });
      } else if (word === 'ca-file' || word === 'crl-file' || word === 'ca-verify-file' || word === 'httpclient.ssl.ca-file') {
        ops.push({ u: 'ca', raw: next });
      }
    }
  }
}
