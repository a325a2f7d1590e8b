// A keyed loop whose text comes out the same as its latest gives the latest's very text, known
// from its elements, so that the map files built from it compare by identity downstream.
import { describe, expect, it } from 'vitest';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';
import { spliced, type LastList } from '../../../src/worker/templates/memo-cache.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { renderScope } from '../../helpers/scope.js';

interface Entry {
  readonly key: string;
  readonly backend: string;
}

const line = (value: unknown): string => `${(value as Entry).key} ${(value as Entry).backend}\n`;

function lastOf(list: readonly Entry[]): LastList {
  const parts = list.map(line);
  let at = 0;
  return { list, text: parts.join(''), ends: parts.map((part) => (at += part.length)) };
}

const entries = (n: number): Entry[] => Array.from({ length: n }, (_, i) => ({ key: `h${i}.test`, backend: `be_${i % 3}` }));

let hashCounter = 0;
const MAP = '{{#memoEach values.list}}\n{{key}} {{backend}}\n{{/memoEach}}\n';

function mapSet(): TemplateSetSource {
  return { hash: `map-text-reuse-${++hashCounter}`, stores: [], snippets: {}, maps: { 'a.map': MAP, 'b.map': MAP.replace('list', 'other') }, files: {}, sslCertificates: {}, values: {}, haproxyConfig: 'global\n' };
}

function renderMaps(engine: TemplateEngine, set: TemplateSetSource, values: Record<string, unknown>): Record<string, string> {
  return engine.render(set, renderScope(() => undefined, values, { mapsDir: '/maps', filesDir: '/files', certsDir: '/certs' }).scope, 1).auxiliaryFiles.maps;
}

describe('a keyed loop whose text is the same as its latest', () => {
  it('keeps the latest text, and its element ends, for a new list of the very same elements', () => {
    const list = entries(20);
    const last = lastOf(list);
    const next = spliced(last, list.slice(), line);
    expect(next?.text).toBe(last.text);
    expect(next?.ends).toBe(last.ends);
    expect(next?.list).not.toBe(last.list);
  });

  it('keeps the latest text for elements replaced by new objects of the same text', () => {
    const list = entries(100);
    const last = lastOf(list);
    const copy = list.slice();
    copy[7] = { ...(list[7] as Entry) };
    copy[12] = { ...(list[12] as Entry) };
    expect(spliced(last, copy, line)?.ends).toBe(last.ends);
  });

  it('gives a new text for an element replaced by one of the same length but other text', () => {
    const list = entries(20);
    const last = lastOf(list);
    const copy = list.slice();
    copy[7] = { key: 'h7.test', backend: 'be_9' };
    const next = spliced(last, copy, line);
    expect(next?.ends).not.toBe(last.ends);
    expect(next?.text).toBe(lastOf(copy).text);
    expect(next?.text).not.toBe(last.text);
  });

  it('renders, in a long-lived engine, the same map files as a fresh engine while one list changes and the other is rebuilt', () => {
    const engine = new TemplateEngine();
    const set = mapSet();
    let list = entries(50);
    const other = entries(30);
    renderMaps(engine, set, { list, other });
    const edits: ((l: Entry[]) => Entry[])[] = [(l) => [...l.slice(0, 10), { key: 'new.test', backend: 'be_x' }, ...l.slice(10)], (l) => l.slice(1), (l) => l.map((e, i) => (i === 5 ? { ...e } : e)), (l) => l.slice()];
    for (const edit of edits) {
      list = edit(list);
      const values = { list, other: other.slice() };
      expect(renderMaps(engine, set, values)).toEqual(renderMaps(new TemplateEngine(), mapSet(), values));
    }
  });
});
