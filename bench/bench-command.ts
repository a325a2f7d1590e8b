// The command line of the benchmark scripts (`npm run bench:* -- --help`): each script declares
// its arguments on a commander Command, so `--help` prints its usage and exits 0 before anything
// is measured, and a bad argument is refused with the usage instead of being ignored.
import { Command, InvalidArgumentError } from 'commander';

/** A command named after its npm script; `parse` it before any work starts. */
export function benchCommand(script: string, description: string): Command {
  return new Command(`npm run ${script} --`).description(description).showHelpAfterError().allowExcessArguments(false);
}

/** Parses one cluster size (`10000` or `10_000`) and adds it to those seen before. */
export function sizeArgument(text: string, previous: readonly number[] | undefined): number[] {
  const value = Number(text.replaceAll('_', ''));
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError(`expected a positive integer, got ${JSON.stringify(text)}`);
  return [...(previous ?? []), value];
}

/** Parses a comma-separated list of cluster sizes (`100,1000`), sorted. */
export function sizeList(text: string): number[] {
  return text
    .split(',')
    .reduce<number[]>((sizes, part) => sizeArgument(part.trim(), sizes), [])
    .sort((a, b) => a - b);
}

/** Parses a positive number of seconds. */
export function secondsArgument(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new InvalidArgumentError(`expected a positive number of seconds, got ${JSON.stringify(text)}`);
  return value;
}
