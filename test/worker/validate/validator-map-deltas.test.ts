import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import { changedLines } from '../../../src/worker/render/text-window.js';
import { IncrementalValidator, checkAuxiliaryFiles, validateStructure } from '../../../src/worker/validate/validator.js';
import { PATHS } from '../../helpers/validation.js';

const BACKENDS = ['be_a', 'be_b', 'be_c'];

/** Backends, and a frontend routing through host.map (value check) and paths.map. */
const CONFIG = [
  'global\n  maxconn 100\n',
  'defaults\n  mode http\n  timeout connect 5s\n',
  `frontend http\n  bind :80\n  use_backend %[req.hdr(host),lower,map_str(${PATHS.mapsDir}/host.map)]\n  use_backend %[base,map_beg(${PATHS.mapsDir}/paths.map,be_a)]\n`,
  ...BACKENDS.map((name) => `backend ${name}\n  server s1 10.0.0.1:80\n`),
].join('\n');

function expectSameReports(v: IncrementalValidator, aux: AuxiliaryFiles): void {
  expect(v.validateStructure(CONFIG, aux, PATHS)).toStrictEqual(validateStructure(CONFIG, aux, PATHS));
  expect(v.checkAuxiliaryFiles(aux, CONFIG, PATHS)).toStrictEqual(checkAuxiliaryFiles(aux, CONFIG, PATHS));
}

/** A map line: mostly well formed, sometimes a comment, a blank, a key without a value, an unknown backend or a CRLF ending. */
const mapLine = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), fc.nat(40), fc.constantFrom(...BACKENDS)).map(([k, n, b]) => `${k}${n}.test ${b}`) },
  { weight: 1, arbitrary: fc.constantFrom('# a comment', '', '   ', 'nokey.test', 'x.test be_unknown', 'y.test be_a\r', '\tz.test   be_b  ') },
);

const edit = fc.record({ at: fc.nat(), remove: fc.nat(3), insert: fc.array(mapLine, { maxLength: 3 }), swap: fc.nat(7) });

function applyEdit(lines: string[], e: { at: number; remove: number; insert: string[] }): string[] {
  const at = lines.length === 0 ? 0 : e.at % (lines.length + 1);
  const next = lines.slice();
  next.splice(at, e.remove, ...e.insert);
  return next;
}

describe('map files read again by their changed lines', () => {
  it('gives the same reports as the pure functions after every random edit of the maps', () => {
    let spliced = 0;
    fc.assert(
      fc.property(fc.array(mapLine, { minLength: 0, maxLength: 30 }), fc.array(edit, { maxLength: 12 }), fc.boolean(), (start, edits, trailing) => {
        const v = new IncrementalValidator();
        const text = (lines: string[]): string => lines.join('\n') + (trailing && lines.length > 0 ? '\n' : '');
        let host = start;
        let paths = start.slice(0, 5);
        expectSameReports(v, { maps: { 'host.map': text(host), 'paths.map': text(paths) }, files: {}, certificates: {} });
        for (const e of edits) {
          host = applyEdit(host, e);
          if (e.at % 3 === 0) paths = applyEdit(paths, e);
          // Now and then the two maps trade texts: each is given the text the other had.
          if (e.swap === 0) [host, paths] = [paths, host];
          expectSameReports(v, { maps: { 'host.map': text(host), 'paths.map': text(paths) }, files: {}, certificates: {} });
        }
        spliced += v.splicedMaps;
      }),
      { numRuns: 300 },
    );
    // The runs did go through the splice, not only through whole reads.
    expect(spliced).toBeGreaterThan(100);
  });

  it('reads one changed line of a large map without reading it whole, and reports an unknown backend on it', () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `h${i}.test ${BACKENDS[i % 3]}`);
    const v = new IncrementalValidator();
    expectSameReports(v, { maps: { 'host.map': `${lines.join('\n')}\n` }, files: {}, certificates: {} });
    const changed = lines.slice();
    changed[2500] = 'h2500.test be_gone';
    expectSameReports(v, { maps: { 'host.map': `${changed.join('\n')}\n` }, files: {}, certificates: {} });
    expect(v.splicedMaps).toBe(1);
    const report = v.validateStructure(CONFIG, { maps: { 'host.map': `${changed.join('\n')}\n` }, files: {}, certificates: {} }, PATHS);
    expect(report.errors.map((e) => e.message)).toContain(`use_backend routes through maps/host.map, whose line 2501 ('h2500.test') names unknown backend 'be_gone'`);
  });

  it('gives the auxiliary report of the pure function when a map of the record is replaced between the two phases', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `h${i}.test ${BACKENDS[i % 3]}`);
    const maps: Record<string, string> = { 'host.map': `${lines.join('\n')}\n` };
    const aux: AuxiliaryFiles = { maps, files: {}, certificates: {} };
    const v = new IncrementalValidator();
    expectSameReports(v, aux);
    const changed = lines.slice();
    changed[10] = 'h10.test be_b';
    maps['host.map'] = `${changed.join('\n')}\n`;
    expect(v.validateStructure(CONFIG, aux, PATHS)).toStrictEqual(validateStructure(CONFIG, aux, PATHS));
    // The same record, one of its maps now a text the structure phase never saw.
    changed[20] = 'nokey.test';
    maps['host.map'] = `${changed.join('\n')}\n`;
    const report = v.checkAuxiliaryFiles(aux, CONFIG, PATHS);
    expect(report).toStrictEqual(checkAuxiliaryFiles(aux, CONFIG, PATHS));
    expect(report.errors.length + report.warnings.length).toBeGreaterThan(0);
  });

  it('reads a map given the text another map had before as that text, after both were read by their changed lines', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `h${i}.test ${BACKENDS[i % 3]}`);
    const other = lines.slice();
    other[100] = 'h100.test be_gone';
    other.splice(103, 1);
    const host = `${lines.join('\n')}\n`;
    const paths = `${other.join('\n')}\n`;
    const v = new IncrementalValidator();
    expectSameReports(v, { maps: { 'host.map': host, 'paths.map': paths }, files: {}, certificates: {} });
    expectSameReports(v, { maps: { 'host.map': paths, 'paths.map': host }, files: {}, certificates: {} });
    expectSameReports(v, { maps: { 'host.map': host, 'paths.map': paths }, files: {}, certificates: {} });
    expect(v.splicedMaps).toBe(4);
  });

  it('cuts two texts at line starts around the lines that differ, and keeps everything around them', () => {
    const texts = fc.array(fc.constantFrom('a', 'b', 'ab', '', 'a b', 'b\r'), { maxLength: 8 }).map((lines) => lines.join('\n'));
    fc.assert(
      fc.property(texts, texts, (before, after) => {
        const cut = changedLines(before, after);
        if (before === after) {
          expect(cut).toBeUndefined();
          return;
        }
        expect(cut).toBeDefined();
        const { start, oldEnd, newEnd } = cut as NonNullable<typeof cut>;
        expect(before.slice(0, start)).toBe(after.slice(0, start));
        expect(before.slice(oldEnd)).toBe(after.slice(newEnd));
        const lineStart = (text: string, at: number): boolean => at === 0 || text[at - 1] === '\n';
        expect(lineStart(before, start) && lineStart(after, start)).toBe(true);
        expect(oldEnd === before.length || lineStart(before, oldEnd)).toBe(true);
        expect(newEnd === after.length || lineStart(after, newEnd)).toBe(true);
        expect(oldEnd).toBeGreaterThanOrEqual(start);
        expect(newEnd).toBeGreaterThanOrEqual(start);
      }),
      { numRuns: 2000 },
    );
  });
});
