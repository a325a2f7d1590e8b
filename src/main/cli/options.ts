// Option parsers shared by the commands: a bad value is an InvalidArgumentError that shows it.
import { InvalidArgumentError } from 'commander';

/** Collects a repeatable option (`--set a=1 --set b=2`) into a list. */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function positiveNumber(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new InvalidArgumentError(`expected a positive number, got ${JSON.stringify(text)}`);
  return value;
}

export function positiveInteger(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) throw new InvalidArgumentError(`expected a positive integer, got ${JSON.stringify(text)}`);
  return value;
}

export function nonNegativeInteger(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new InvalidArgumentError(`expected a non-negative integer, got ${JSON.stringify(text)}`);
  return value;
}
