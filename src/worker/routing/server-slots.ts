// Server slots: each backend has a fixed number of server lines, and endpoints are assigned to
// them so that they stay put across renders. The assignment is written as an auxiliary file and
// read back from the next baseline; endpoint churn then only changes the address and state of
// existing slots, which HAProxy's Runtime API can apply live without a reload. A backend grows
// by whole blocks and shrinks back with hysteresis (see assignSlots); both the block and the
// total are capped at MAX_SERVER_SLOTS.
import { flat } from '../store/compact-object.js';
import { MAX_SERVER_SLOTS } from '../store/value-limits.js';
import type { Server } from './model.js';

export const SERVER_SLOTS_FILE = 'server-slots.txt';
/** Where an empty slot points; it is always `disabled`, so nothing is ever sent there. */
export const PARKED_ADDRESS = '127.0.0.1:1';
/** Slots per backend beyond which a slot file line is ignored. */
export const MAX_SLOTS = MAX_SERVER_SLOTS;

/**
 * The slot count of a backend with `endpoints` endpoints that had `previous` slots, in blocks of
 * `block` (clamped to 1..MAX_SERVER_SLOTS), never over MAX_SERVER_SLOTS:
 * - grow: when the endpoints outnumber the slots, to the whole blocks that hold them;
 * - shrink, with hysteresis: only when fewer than half the slots are in use, and then to the
 *   smallest whole number of blocks at least twice the endpoints (half full), never below one
 *   block. After a shrink it takes doubling the endpoints to grow again, and halving them to
 *   shrink again, so a backend does not flap between sizes; a spike is given back once it is over.
 * The rule is idempotent: applied to its own result with the same endpoints it changes nothing,
 * which is what lets an incremental render reuse a backend's slots as a cold render computes them.
 */
export function slotCount(endpoints: number, previous: number, block: number): number {
  const size = Math.min(MAX_SERVER_SLOTS, Math.max(1, Math.floor(block) || 1));
  const current = Math.min(MAX_SERVER_SLOTS, previous);
  const needed = wholeBlocks(endpoints, size);
  if (needed > current) return needed;
  const halfFull = wholeBlocks(2 * endpoints, size);
  return halfFull < current ? halfFull : current;
}

/** The slots `n` endpoints take in blocks of `size` (at least one block, at most the cap). */
function wholeBlocks(n: number, size: number): number {
  return Math.min(MAX_SERVER_SLOTS, Math.max(1, Math.ceil(n / size)) * size);
}

/**
 * Keeps every endpoint that already had a slot that still exists in that slot, fills free slots
 * in order with the other endpoints, and sizes the backend with slotCount. Endpoints beyond the
 * total cap (MAX_SERVER_SLOTS) get no slot; the endpoints cap per Service warns long before.
 */
export function assignSlots(endpoints: readonly string[], previous: readonly string[] | undefined, block: number): Server[] {
  const count = slotCount(endpoints.length, previous?.length ?? 0, block);
  const slots: string[] = new Array<string>(count).fill('');
  const placed = new Set<string>();
  const wanted = new Set(endpoints);
  if (previous !== undefined) {
    for (let i = 0; i < Math.min(previous.length, count); i++) {
      const address = previous[i] as string;
      if (address !== '' && wanted.has(address) && !placed.has(address)) {
        slots[i] = address;
        placed.add(address);
      }
    }
  }
  let free = 0;
  for (const address of endpoints) {
    if (placed.has(address)) continue;
    while (free < count && slots[free] !== '') free++;
    if (free >= count) break;
    slots[free] = address;
    placed.add(address);
  }
  return slots.map((address, i) => (address === '' ? parkedServer(i) : { name: slotName(i), address, enabled: true }));
}

/**
 * Slot names and empty slots, shared by every backend: most slots of a cluster are empty, and a
 * worker holds every backend's servers between renders, so each backend holding its own copies
 * of the same names and parked servers would cost it about half a KiB.
 */
const SLOT_NAMES: string[] = [];
const PARKED_SERVERS: Server[] = [];

function slotName(index: number): string {
  return (SLOT_NAMES[index] ??= `srv${index + 1}`);
}

function parkedServer(index: number): Server {
  return (PARKED_SERVERS[index] ??= Object.freeze({ name: slotName(index), address: PARKED_ADDRESS, enabled: false }));
}

/** Slots per slot-file line: a backend of 1,000 slots takes 10 lines, each far below HAProxy's line cap. */
export const SLOTS_PER_LINE = 100;

/**
 * Parses the slot file of a baseline: lines of `<backend> <slot> <slot> ...`, each slot an
 * `address:port` or `-` when empty; a backend's slots continue on its next line (SLOTS_PER_LINE
 * per line). Malformed lines, and backends past MAX_SLOTS, are skipped. Each call returns a new
 * map; the builder keeps its last parse while the baseline's text is unchanged.
 */
export function parseSlotFile(text: string | undefined): Map<string, string[]> {
  if (text === undefined || text === '') return new Map();
  const slots = new Map<string, string[]>();
  const tooLong = new Set<string>();
  for (const line of text.split('\n')) {
    const parts = line.split(' ');
    const backend = parts[0];
    if (backend === undefined || backend === '' || parts.length < 2 || tooLong.has(backend)) continue;
    const held = slots.get(backend) ?? [];
    for (let i = 1; i < parts.length; i++) held.push(parts[i] === '-' ? '' : (parts[i] as string));
    if (held.length > MAX_SLOTS) {
      tooLong.add(backend);
      slots.delete(backend);
      continue;
    }
    slots.set(backend, held);
  }
  return slots;
}

/** One backend's slots in a slot file, as parseSlotFile would give them, without parsing the rest. */
export function backendSlots(text: string, backend: string): string[] | undefined {
  const lead = `${backend} `;
  let held: string[] | undefined;
  for (let at = text.startsWith(lead) ? 0 : text.indexOf(`\n${lead}`); at >= 0; at = text.indexOf(`\n${lead}`, at + 1)) {
    const start = text.charCodeAt(at) === 10 ? at + 1 : at;
    const end = text.indexOf('\n', start);
    const parts = text.slice(start, end < 0 ? text.length : end).split(' ');
    held ??= [];
    for (let i = 1; i < parts.length; i++) held.push(parts[i] === '-' ? '' : (parts[i] as string));
    if (held.length > MAX_SLOTS) return undefined;
  }
  return held;
}

/** The slot file lines of one backend ('' slots written as `-`), SLOTS_PER_LINE slots per line. */
export function slotLine(backend: string, slots: readonly string[]): string {
  let text = '';
  for (let start = 0; start < slots.length || start === 0; start += SLOTS_PER_LINE) {
    let line = backend;
    const end = Math.min(slots.length, start + SLOTS_PER_LINE);
    for (let i = start; i < end; i++) line += slots[i] === '' ? ' -' : ` ${slots[i] as string}`;
    text += `${line}\n`;
  }
  // Flat: the line is cached per backend between renders, and as built it is a rope of a piece per slot.
  return flat(text);
}
