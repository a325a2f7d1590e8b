// The config as pieces: its top-level memo blocks' texts, and the rest of it (the frame) with a
// placeholder character where each of them goes. Handlebars builds the output by concatenation,
// so a render whose text is the same as the last one's still gives a new string: whoever reads it
// first (the validator, the checksum, the diff against the baseline) flattens it, a copy of the
// whole config, and compares it with the last one in full. Rendered as pieces, the config is
// assembled from the frame and the texts; when the frame is the same text and each piece is the
// same as the last render's, the config is the last render's own string, which every later step
// recognises by identity. The assembly is what the plain render gives: a piece is placed only
// where Handlebars would put its text unchanged (piecePlaces), and only when the frame holds
// exactly one placeholder per piece, in order (otherwise the caller renders without pieces).
type Node = hbs.AST.Node;

/** Where a piece's text goes in the frame. Object text never carries it (a NUL) in a rendered config. */
export const PIECE_MARK = '\u0000';

/** Block helpers that put their block's text in the output as it is, once per run of the block. */
const PASS_THROUGH = new Set(['if', 'unless', 'each', 'with']);

/**
 * The IDs (`__memoId`, given by checkMemoBlocks) of the memo blocks of a prepared template that
 * can be pieces: those not inside another memo block, a partial or any block helper but the
 * built-in if, unless, each and with, whose text Handlebars concatenates into the output as it is.
 */
export function piecePlaces(program: hbs.AST.Program, idKey: string): ReadonlySet<string> {
  const ids = new Set<string>();
  const visitProgram = (body: hbs.AST.Program | undefined | null): void => {
    for (const statement of body?.body ?? []) visit(statement);
  };
  const visit = (node: Node): void => {
    if (node.type !== 'BlockStatement') return;
    const block = node as hbs.AST.BlockStatement;
    const helper = block.path.type === 'PathExpression' ? (block.path as hbs.AST.PathExpression).original : '';
    if (helper === 'memo' || helper === 'memoEach') {
      const id = block.hash?.pairs.find((pair) => pair.key === idKey)?.value;
      if (id?.type === 'StringLiteral') ids.add((id as hbs.AST.StringLiteral).value);
      // Its {{else}} is rendered in the enclosing context, not as a memo block's text.
      return;
    }
    if (!PASS_THROUGH.has(helper) || block.params.length !== 1) return;
    visitProgram(block.program);
    visitProgram(block.inverse);
  };
  visitProgram(program);
  return ids;
}

/** The last assembly: its frame, pieces and text. */
interface Assembled {
  readonly frame: string;
  readonly pieces: readonly string[];
  readonly text: string;
}

export class OutputPieces {
  #last: Assembled | undefined;

  /**
   * The text of `frame` with each placeholder replaced by its piece, in order: the last
   * assembly's very string when frame and pieces are the same texts as then. Undefined when the
   * frame does not hold exactly one placeholder per piece.
   */
  assemble(frame: string, pieces: readonly string[]): string | undefined {
    const last = this.#last;
    if (last !== undefined && last.frame === frame && samePieces(last.pieces, pieces)) return last.text;
    const parts = frame.split(PIECE_MARK);
    if (parts.length !== pieces.length + 1) {
      this.#last = undefined;
      return undefined;
    }
    let text = parts[0] as string;
    for (let i = 0; i < pieces.length; i++) text += (pieces[i] as string) + (parts[i + 1] as string);
    this.#last = { frame, pieces, text };
    return text;
  }
}

/** Same texts, compared by identity first: a piece that is the last one's string costs nothing. */
function samePieces(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
