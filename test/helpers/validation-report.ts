// Reading the validator's reports in tests: an issue's line, its messages, and the check that a
// report holds exactly one error.
import { expect } from 'vitest';
import { formatIssue, type ValidationIssue, type ValidationReport } from '../../src/worker/validate/validator.js';

export function lineOf(config: string, needle: string): number {
  const index = config.split('\n').findIndex((l) => l.includes(needle));
  if (index < 0) throw new Error(`no line contains ${needle}`);
  return index + 1;
}

export function messages(report: ValidationReport): string[] {
  return report.errors.map(formatIssue);
}

/** The report has exactly one error, on the line containing `needle`, matching `pattern`. */
export function expectOneError(report: ValidationReport, config: string, needle: string, pattern: RegExp): ValidationIssue {
  expect(messages(report)).toHaveLength(1);
  const issue = report.errors[0] as ValidationIssue;
  expect(issue.phase).toBe('validation');
  expect(issue.file).toBe('haproxy.cfg');
  expect(issue.line).toBe(lineOf(config, needle));
  expect(issue.message).toMatch(pattern);
  return issue;
}
