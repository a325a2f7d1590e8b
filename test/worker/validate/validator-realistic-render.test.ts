// The validator on a realistic render: both phases, never a throw, and linear time on a large config.
import { describe, expect, it } from 'vitest';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import { validateConfig } from '../../../src/worker/validate/validator.js';
import { PATHS, aux, backend, realisticAux, realisticConfig } from '../../helpers/validation.js';
import { lineOf, messages } from '../../helpers/validation-report.js';

describe('validateConfig on a realistic render', () => {
  it('a realistic config with frontends, backends, maps and certificates passes both phases', () => {
    const report = validateConfig(realisticConfig(), realisticAux(), PATHS);
    expect(messages(report)).toEqual([]);
    expect(report.warnings).toEqual([]);
  });

  it('validateConfig reports the errors of both phases, each naming its phase', () => {
    const files = realisticAux();
    const broken: AuxiliaryFiles = { ...files, maps: { ...files.maps, 'host.map': 'echo.example.test\n' } };
    const config = `${realisticConfig()}  bogus-keyword 1\n`;
    const report = validateConfig(config, broken, PATHS);
    expect(report.errors.map((e) => e.phase)).toEqual(['validation', 'auxiliary']);
    expect(messages(report)).toEqual([
      `haproxy.cfg:${lineOf(config, 'bogus-keyword')}: unknown keyword 'bogus-keyword' in backend 'be_shop_web_8080'`,
      "maps/host.map:1: map entry 'echo.example.test' has no value (expected '<key> <value>')",
    ]);
  });

  it('never throws, whatever the input', () => {
    const garbage = '\u0000\u0001"unterminated\n\\\n}{%[map(\n,map_beg(\nserver\nbind\n';
    expect(() => validateConfig(garbage, aux({ maps: { 'x.map': garbage }, certificates: { 'x.pem': garbage } }), PATHS)).not.toThrow();
    const report = validateConfig(garbage, aux(), PATHS);
    expect(report.errors.length).toBeGreaterThan(0);
  });

  it('validates a 10,000-backend config in linear time', () => {
    const backends: string[] = [];
    const hosts: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      backends.push(backend(`be_ns${i}_svc_80`, 5));
      hosts.push(`svc${i}.example.test be_ns${i}_svc_80`);
    }
    const files = realisticAux();
    const bigAux: AuxiliaryFiles = { ...files, maps: { ...files.maps, 'host.map': `${hosts.join('\n')}\n` } };
    const config = realisticConfig(PATHS, backends);
    expect(config.split('\n').length).toBeGreaterThan(100_000);
    const started = performance.now();
    const report = validateConfig(config, bigAux, PATHS);
    const elapsed = performance.now() - started;
    expect(messages(report)).toEqual([]);
    // A generous bound: the point is linear work, not a benchmark (typically well under 1 s).
    expect(elapsed).toBeLessThan(10_000);
  });
});
