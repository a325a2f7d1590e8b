// The CLI's commander program, built the way src/main/cli/cli.ts builds it but without parsing
// process.argv: cli.ts is read for its `registerX(program)` calls and the modules they are
// imported from, so a command registered there tomorrow is known here without an edit.
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './cli-process.js';

const CLI_DIR = join(REPO_ROOT, 'src', 'main', 'cli');

export async function cliProgram(): Promise<Command> {
  const source = readFileSync(join(CLI_DIR, 'cli.ts'), 'utf8');
  const moduleOf = new Map<string, string>();
  for (const [, names, module] of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'\.\/([\w./-]+)\.js'/g)) {
    for (const name of names.split(',').map((n) => n.trim().replace(/^type\s+/, ''))) if (name !== '') moduleOf.set(name, module);
  }
  const program = new Command().exitOverride();
  const calls = [...source.matchAll(/^\s*(register\w+)\(program\);/gm)].map((m) => m[1]);
  if (calls.length === 0) throw new Error('src/main/cli/cli.ts registers no command (no `registerX(program);` line)');
  for (const name of calls) {
    const module = moduleOf.get(name);
    if (module === undefined) throw new Error(`src/main/cli/cli.ts calls ${name} but imports it from no ./module.js`);
    const exports = (await import(pathToFileURL(join(CLI_DIR, `${module}.ts`)).href)) as Record<string, unknown>;
    const register = exports[name];
    if (typeof register !== 'function') throw new Error(`src/main/cli/${module}.ts does not export a function ${name}`);
    (register as (program: Command) => void)(program);
  }
  return program;
}

/** The long flags a subcommand accepts, with whether each takes a value; undefined: no such command. */
export function commandFlags(program: Command, name: string): Map<string, { takesValue: boolean }> | undefined {
  const command = program.commands.find((c) => c.name() === name);
  if (command === undefined) return undefined;
  const flags = new Map<string, { takesValue: boolean }>();
  for (const option of command.options) if (option.long !== undefined) flags.set(option.long, { takesValue: option.required || option.optional });
  flags.set('--help', { takesValue: false });
  return flags;
}
