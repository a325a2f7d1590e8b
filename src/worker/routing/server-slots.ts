// Server slots: each backend has a fixed number of server lines, and endpoints are assigned to
// them so that they stay put across renders. The assignment is written as an auxiliary file and
// read back from the next baseline; endpoint churn then only changes the address and state of
// existing slots, which HAProxy's Runtime API can apply live without a reload.
import type { Server } from './model.js';

export const SERVER_SLOTS_FILE = 'server-slots.txt';
/** Where an empty slot points; it is always `disabled`, so nothing is ever sent there. */
export const PARKED_ADDRESS = '127.0.0.1:1';
/** Slots per backend beyond which a slot file line is ignored. */
export const MAX_SLOTS = 100_000;

/**
 * Keeps every endpoint that already had a slot in that slot, fills free slots in order with new
 * endpoints, and grows by whole blocks only when the endpoints outnumber the slots. The slot
 * count never shrinks within a baseline's lineage, so churn never removes a server line.
 */
export function assignSlots(endpoints: readonly string[], previous: readonly string[] | undefined, block: number): Server[] {
  const needed = Math.max(1, Math.ceil(endpoints.length / block)) * block;
  const count = Math.max(needed, previous?.length ?? 0);
  const slots: string[] = new Array<string>(count).fill('');
  const placed = new Set<string>();
  const wanted = new Set(endpoints);
  if (previous !== undefined) {
    for (let i = 0; i < previous.length; i++) {
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
    while (slots[free] !== '') free++;
    slots[free] = address;
    placed.add(address);
  }
  return slots.map((address, i) => ({
    name: `srv${i + 1}`,
    address: address === '' ? PARKED_ADDRESS : address,
    enabled: address !== '',
  }));
}

/**
 * Parses the slot file of a baseline: one line per backend, `<backend> <slot 1> <slot 2> ...`,
 * each slot an `address:port` or `-` when empty. Malformed lines are skipped. Each call returns
 * a new map; the builder keeps its last parse while the baseline's text is unchanged.
 */
export function parseSlotFile(text: string | undefined): Map<string, string[]> {
  if (text === undefined || text === '') return new Map();
  const slots = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const parts = line.split(' ');
    const backend = parts[0];
    if (backend === undefined || backend === '' || parts.length < 2 || parts.length > MAX_SLOTS + 1) continue;
    slots.set(backend, parts.slice(1).map((address) => (address === '-' ? '' : address)));
  }
  return slots;
}

/** The slot file line of one backend ('' slots written as `-`). */
export function slotLine(backend: string, slots: readonly string[]): string {
  let line = backend;
  for (const address of slots) line += address === '' ? ' -' : ` ${address}`;
  return `${line}\n`;
}
