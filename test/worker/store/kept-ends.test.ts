// Lists recorded as made from another by edits between kept ends (list-replacements.ts): the
// record answers only for the list it was made from, bad bounds record nothing, and a newer
// record drops the older one, as replacement records do.
import { describe, expect, it } from 'vitest';
import { keptEndsSince, recordKeptEnds, recordReplacements } from '../../../src/worker/store/list-replacements.js';

describe('kept ends of a list made from another', () => {
  it('are given for the list it was made from, and for no other', () => {
    const previous = ['a', 'b', 'c', 'd'];
    const list = ['a', 'x', 'y', 'c', 'd'];
    recordKeptEnds(list, previous, 1, 2);
    expect(keptEndsSince(list, previous)).toMatchObject({ prefix: 1, suffix: 2 });
    expect(keptEndsSince(list, ['a', 'b', 'c', 'd'])).toBeUndefined();
  });

  it('are not recorded when they overlap or run past either list', () => {
    const previous = ['a', 'b', 'c'];
    const list = ['a', 'c'];
    recordKeptEnds(list, previous, 1, 2);
    expect(keptEndsSince(list, previous)).toBeUndefined();
    recordKeptEnds(list, previous, -1, 0);
    expect(keptEndsSince(list, previous)).toBeUndefined();
    recordKeptEnds(list, previous, 1, 1);
    expect(keptEndsSince(list, previous)).toMatchObject({ prefix: 1, suffix: 1 });
  });

  it('follow from a replacement record: up to the first and after the last replaced position', () => {
    const previous = ['a', 'b', 'c', 'd', 'e'];
    const list = ['a', 'B', 'c', 'D', 'e'];
    recordReplacements(list, previous, [3, 1]);
    expect(keptEndsSince(list, previous)).toEqual({ prefix: 1, suffix: 1 });
  });

  it('of a list are dropped once a newer list is recorded as made from it', () => {
    const first = ['a', 'b'];
    const second = ['a', 'x', 'b'];
    const third = ['a', 'x', 'y', 'b'];
    recordKeptEnds(second, first, 1, 1);
    recordKeptEnds(third, second, 2, 1);
    expect(keptEndsSince(second, first)).toBeUndefined();
    expect(keptEndsSince(third, second)).toMatchObject({ prefix: 2, suffix: 1 });
  });
});
