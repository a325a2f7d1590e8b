// How a validation issue is written out.
import { describe, expect, it } from 'vitest';
import { formatIssue } from '../../../src/worker/validate/validator.js';

describe('formatIssue', () => {
  it('formats an issue with a line as file:line: message', () => {
    expect(formatIssue({ phase: 'validation', file: 'haproxy.cfg', line: 12, message: "unknown keyword 'foo' in backend 'be_x'" })).toBe(
      "haproxy.cfg:12: unknown keyword 'foo' in backend 'be_x'",
    );
    expect(formatIssue({ phase: 'auxiliary', file: 'maps/host.map', line: 3, message: 'x' })).toBe('maps/host.map:3: x');
  });

  it('formats an issue without a line as file: message', () => {
    expect(formatIssue({ phase: 'auxiliary', file: 'certs/a.pem', message: 'no private key' })).toBe('certs/a.pem: no private key');
  });
});
