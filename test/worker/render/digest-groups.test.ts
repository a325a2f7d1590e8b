import { describe, expect, it } from 'vitest';
import { DigestGroups, GROUP } from '../../../src/worker/render/digest-groups.js';

/** A 32-character latin1 digest standing for `n`. */
function digest(n: number): string {
  return String(n).padStart(32, '#');
}

function groupsOf(list: readonly string[]): string[] {
  const out: string[] = [];
  for (let g = 0; g * GROUP < list.length; g++) out.push(list.slice(g * GROUP, (g + 1) * GROUP).join(''));
  return out;
}

function textsOf(groups: DigestGroups): string[] {
  return Array.from({ length: groups.groups }, (_, g) => groups.groupText(g));
}

describe('DigestGroups', () => {
  it('holds the digests of each group joined, as a group digest hashes them', () => {
    const list = Array.from({ length: 2 * GROUP + 5 }, (_, i) => digest(i));
    const groups = DigestGroups.of(list);
    expect(groups.length).toBe(list.length);
    expect(textsOf(groups)).toEqual(groupsOf(list));
    expect(groups.at(GROUP + 3)).toBe(digest(GROUP + 3));
  });

  it('gives the same groups as an array after any sequence of splices and assignments', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const list = Array.from({ length: 3 * GROUP }, (_, i) => digest(i));
    const groups = DigestGroups.of(list);
    let next = list.length;
    for (let step = 0; step < 300; step++) {
      if (random(2) === 0 && list.length > 0) {
        const changes = new Map<number, string>();
        for (let k = random(4) + 1; k > 0; k--) changes.set(random(list.length), digest(next++));
        const changed = groups.assign(changes);
        for (const [index, value] of changes) list[index] = value;
        expect(changed).toEqual(new Set([...changes.keys()].map((i) => Math.floor(i / GROUP))));
      } else {
        const start = random(list.length + 1);
        const remove = random(Math.min(list.length - start, GROUP) + 1);
        const inserted = Array.from({ length: random(GROUP + 2) }, () => digest(next++));
        groups.splice(start, remove, inserted);
        list.splice(start, remove, ...inserted);
      }
      expect(groups.length).toBe(list.length);
      expect(textsOf(groups)).toEqual(groupsOf(list));
    }
  });
});
