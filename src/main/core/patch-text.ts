// The text an edit of a RenderPatch removed from the render it edits: as the patch carries it
// (the pool keeps it, so nothing slices the earlier render's whole text), else sliced from it.
import type { RenderPatch, TextEdit } from '../../worker/protocol.js';

/** What edit `index` of `patch.edits[file]` removed from `before` (the text of render `patch.from`). */
export function removedText(patch: RenderPatch, file: string, index: number, edit: TextEdit, before: string): string {
  const kept = patch.removed?.[file]?.[index];
  return typeof kept === 'string' && kept.length === edit.remove ? kept : before.slice(edit.at, edit.at + edit.remove);
}
