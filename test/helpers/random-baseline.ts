// The baselines a property test hands the next render: the last output, an older one, none, or
// the last output with a hand-edited server-slots file.
import { parseSlotFile, SERVER_SLOTS_FILE, slotLine } from '../../src/worker/routing/ingress-model.js';
import type { RenderBaseline } from '../../src/worker/protocol.js';
import { between, type Random } from './random.js';

/** The baseline's slot file with 1-3 hand edits, as an operator (or a stale file) might leave it. */
function handEditedSlots(random: Random, baseline: RenderBaseline): RenderBaseline {
  const slots = [...parseSlotFile(baseline.auxiliaryFiles.files[SERVER_SLOTS_FILE])].map(([name, list]) => [name, [...list]] as [string, string[]]);
  const randomAddress = (): string => `10.${between(random, 0, 2)}.${between(random, 0, 3)}.${between(random, 1, 30)}:8080`;
  for (let n = between(random, 1, 3); n > 0; n--) {
    const roll = random();
    const at = Math.floor(random() * slots.length);
    const entry = slots[at];
    const slot = entry === undefined ? 0 : Math.floor(random() * entry[1].length);
    if (entry !== undefined && roll < 0.2) {
      entry[1][slot] = '';
    } else if (entry !== undefined && slots.length > 1 && roll < 0.4) {
      // Swap the addresses of two slots (of the same backend or not).
      const other = slots[Math.floor(random() * slots.length)] as [string, string[]];
      const otherSlot = Math.floor(random() * other[1].length);
      const mine = entry[1][slot] as string;
      entry[1][slot] = other[1][otherSlot] as string;
      other[1][otherSlot] = mine;
    } else if (entry !== undefined && roll < 0.55) {
      slots.splice(at, 1);
    } else if (entry !== undefined && roll < 0.7) {
      // More slots than the backend has (up to 25).
      while (entry[1].length < between(random, 11, 25)) entry[1].push('');
      entry[1][entry[1].length - 1] = randomAddress();
    } else if (roll < 0.8) {
      slots.push(['ing_alpha_gone_app0_80', ['', `10.0.0.${between(random, 1, 30)}:8080`, '']]);
    } else if (entry !== undefined && roll < 0.9) {
      entry[1][slot] = randomAddress();
    } else {
      slots.length = 0;
    }
  }
  const text = slots.map(([name, list]) => slotLine(name, list)).join('');
  return { ...baseline, auxiliaryFiles: { ...baseline.auxiliaryFiles, files: { ...baseline.auxiliaryFiles.files, [SERVER_SLOTS_FILE]: text } } };
}

/** Picks the baseline of the next render: mostly the last output, as the coordinator does. */
export function chooseBaseline(random: Random, history: readonly RenderBaseline[]): { baseline: RenderBaseline | undefined; label: string } {
  const last = history[history.length - 1];
  const roll = random();
  if (roll < 0.62 || last === undefined) return { baseline: last, label: last === undefined ? 'none yet' : 'previous output' };
  if (roll < 0.76) {
    const back = between(random, 1, Math.min(8, history.length));
    return { baseline: history[history.length - back], label: `output from ${back} successful renders ago` };
  }
  if (roll < 0.88) return { baseline: undefined, label: 'no baseline' };
  return { baseline: handEditedSlots(random, last), label: 'previous output with a hand-edited server-slots.txt' };
}
