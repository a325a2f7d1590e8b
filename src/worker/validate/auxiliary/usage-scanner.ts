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
    // A needle is looked for within one line: one that holds a line break is never on a line.
    this.#needles = [paths.mapsDir, paths.filesDir, paths.certsDir, 'crt', 'ca-'].filter((n) => n !== '' && !n.includes('\n'));
    this.#resolver = resolver;
  }

  scan(text: string): readonly UsageOp[] {
    const ops: UsageOp[] = [];
    try {
      // Each needle is searched for in the whole text, and only the lines holding one are cut
      // out, in text order: the same lines a line-by-line test finds (no needle spans lines).
      const needles = this.#needles;
      const next = needles.map((n) => text.indexOf(n));
      let pos = 0;
      for (;;) {
        let hit = -1;
        for (let k = 0; k < needles.length; k++) {
          let at = next[k] as number;
          if (at >= 0 && at < pos) next[k] = at = text.indexOf(needles[k] as string, pos);
          if (at >= 0 && (hit < 0 || at < hit)) hit = at;
        }
        if (hit < 0) break;
        const start = text.lastIndexOf('\n', hit) + 1;
        let end = text.indexOf('\n', hit);
        if (end < 0) end = text.length;
        this.#line(text.slice(start, end), ops);
        pos = end + 1;
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
