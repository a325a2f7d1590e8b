// LineDeltas: where an agent's rewritten config (render-rewrite.ts) is longer or shorter than the
// leader's source, line by line, so that a config patch finds its lines in the rewritten text
// without counting the line breaks of the whole config. A line-local rewrite keeps every line
// break and changes the length of few lines (binds, lines naming the leader's paths); only those
// are listed, by the offset of their start in the source, with how many characters the rewrite
// adds (negative: removes). The rewritten offset of a source line start is that offset plus the
// deltas of the lines before it. Immutable: a patch gives a new one, so the held render keeps its own.

export class LineDeltas {
  /** Source offsets of the line starts whose rewrite changed the length, ascending. */
  readonly #starts: readonly number[];
  /** Characters the rewrite adds to each of those lines. */
  readonly #deltas: readonly number[];

  private constructor(starts: readonly number[], deltas: readonly number[]) {
    this.#starts = starts;
    this.#deltas = deltas;
  }

  /** The deltas of `rewritten` against `source` (one pass over both); undefined when they do not have the same line breaks count. */
  static between(source: string, rewritten: string): LineDeltas | undefined {
    const starts: number[] = [];
    const deltas: number[] = [];
    if (!lineDeltas(source, rewritten, 0, starts, deltas)) return undefined;
    return new LineDeltas(starts, deltas);
  }

  /** Lines whose length changed (tests, logs). */
  get size(): number {
    return this.#starts.length;
  }

  /** The offset in the rewritten text of the source offset `at`, which starts a line or is the end of one (a line break or the end). */
  rewrittenOffset(at: number): number {
    let offset = at;
    for (let i = 0; i < this.#starts.length && (this.#starts[i] as number) < at; i++) offset += this.#deltas[i] as number;
    return offset;
  }

  /**
   * The deltas after the source lines [from, to) (from a line start to a line's end) became
   * `lines`, rewritten as `rewrittenLines`; undefined when the two do not have the same line breaks.
   */
  replaced(from: number, to: number, lines: string, rewrittenLines: string): LineDeltas | undefined {
    const starts: number[] = [];
    const deltas: number[] = [];
    let i = 0;
    for (; i < this.#starts.length && (this.#starts[i] as number) < from; i++) {
      starts.push(this.#starts[i] as number);
      deltas.push(this.#deltas[i] as number);
    }
    const added: number[] = [];
    if (!lineDeltas(lines, rewrittenLines, from, added, deltas)) return undefined;
    starts.push(...added);
    const shift = lines.length - (to - from);
    for (; i < this.#starts.length; i++) {
      const start = this.#starts[i] as number;
      if (start <= to) continue;
      starts.push(start + shift);
      deltas.push(this.#deltas[i] as number);
    }
    return new LineDeltas(starts, deltas);
  }
}

/** Appends the line starts (plus `base`) and deltas of the lines of `a` whose length differs in `b`; false when the line counts differ. */
function lineDeltas(a: string, b: string, base: number, starts: number[], deltas: number[]): boolean {
  if (a.length === b.length && a === b) return true;
  let at = 0;
  let bt = 0;
  for (;;) {
    const aEnd = a.indexOf('\n', at);
    const bEnd = b.indexOf('\n', bt);
    if (aEnd < 0 !== bEnd < 0) return false;
    const aLength = (aEnd < 0 ? a.length : aEnd) - at;
    const bLength = (bEnd < 0 ? b.length : bEnd) - bt;
    if (aLength !== bLength) {
      starts.push(base + at);
      deltas.push(bLength - aLength);
    }
    if (aEnd < 0) return true;
    at = aEnd + 1;
    bt = bEnd + 1;
  }
}
