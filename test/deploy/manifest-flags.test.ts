// Every command line in the shipped manifests is one the CLI accepts: the subcommand exists, each
// --flag is one of its options (read from the commander program itself), a flag that takes a
// value has one, no value stands alone, every --set key is a value of the default template set,
// and every $(VAR) is an env var of the container. The flags come from the manifests (the base
// and each component's patches), so a flag added there is checked without an edit here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { cliProgram, commandFlags } from '../helpers/cli-program.js';
import { documentName, isRecord, manifestVariants } from '../helpers/kube-manifests.js';
import type { Command } from 'commander';

const IMAGE = 'haptic-reconciler';

interface Invocation {
  /** `variant: file Kind ns/name container NAME`, for messages. */
  readonly where: string;
  readonly command: unknown;
  readonly args: readonly string[];
  readonly env: ReadonlySet<string>;
}

/** The containers that run this project's image, one entry per distinct command line. */
function invocations(): Invocation[] {
  const seen = new Set<string>();
  const found: Invocation[] = [];
  for (const variant of manifestVariants()) {
    for (const document of variant.documents) {
      for (const container of podContainers(document.object)) {
        if (typeof container.image !== 'string' || !container.image.split('/').pop()?.startsWith(`${IMAGE}:`)) continue;
        const args = Array.isArray(container.args) ? container.args.map(String) : [];
        const key = JSON.stringify([document.file, container.name, container.command, args]);
        if (seen.has(key)) continue;
        seen.add(key);
        const env = new Set((Array.isArray(container.env) ? container.env : []).map((e: unknown) => (isRecord(e) ? String(e.name) : '')));
        found.push({ where: `${variant.name}: ${documentName(document)} container ${String(container.name)}`, command: container.command, args, env });
      }
    }
  }
  return found;
}

function podContainers(object: Record<string, unknown>): Record<string, unknown>[] {
  const spec = isRecord(object.spec) && isRecord(object.spec.template) && isRecord(object.spec.template.spec) ? object.spec.template.spec : undefined;
  if (spec === undefined) return [];
  return [spec.initContainers, spec.containers].flatMap((list) => (Array.isArray(list) ? list.filter(isRecord) : []));
}

/** What is wrong with one command line, each problem a sentence naming the argument. */
function commandLineProblems(program: Command, invocation: Invocation, templateValues: ReadonlySet<string>): string[] {
  const [subcommand, ...rest] = invocation.args;
  if (subcommand === undefined) return ['no subcommand in args'];
  const flags = commandFlags(program, subcommand);
  if (flags === undefined) return [`"${subcommand}" is not a command of the CLI (commands: ${program.commands.map((c) => c.name()).join(', ')})`];
  const problems: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--')) {
      problems.push(`"${arg}" follows no flag that takes a value`);
      continue;
    }
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const option = flags.get(flag);
    if (option === undefined) {
      problems.push(`${subcommand} has no flag ${flag}`);
      if (inline === undefined && rest[i + 1] !== undefined && !rest[i + 1].startsWith('--')) i++;
      continue;
    }
    if (!option.takesValue) {
      if (inline !== undefined) problems.push(`${flag} takes no value, got "${inline}"`);
      continue;
    }
    const value = inline ?? rest[++i];
    if (value === undefined || (inline === undefined && value.startsWith('--'))) {
      problems.push(`${flag} needs a value`);
      if (value !== undefined) i--;
      continue;
    }
    if (flag === '--set') {
      const key = value.split('=')[0];
      if (!value.includes('=') || !templateValues.has(key)) problems.push(`--set ${value}: "${key}" is not a value of templates/default.yaml`);
    }
  }
  for (const arg of invocation.args) {
    for (const [, name] of arg.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
      if (!invocation.env.has(name)) problems.push(`"${arg}" refers to $(${name}), which is not an env var of the container`);
    }
  }
  return problems;
}

describe('command lines in deploy/kubernetes', () => {
  let program: Command;
  const templateValues = new Set(Object.keys((parse(readFileSync(join(REPO_ROOT, 'templates', 'default.yaml'), 'utf8')) as { values: object }).values));
  const found = invocations();

  beforeAll(async () => {
    program = await cliProgram();
  });

  it('the CLI program loads with its run command, and the manifests run the image in both Deployments', () => {
    expect(commandFlags(program, 'run')?.has('--leader-elect')).toBe(true);
    expect(new Set(found.map((i) => i.args[0]))).toEqual(new Set(['run', 'agent']));
  });

  for (const invocation of found) {
    it(`${invocation.where}: uses the image's entrypoint, and every flag is one the CLI accepts`, () => {
      expect(invocation.command, 'command: overrides the entrypoint; set args only').toBeUndefined();
      expect(commandLineProblems(program, invocation, templateValues)).toEqual([]);
    });
  }

  it('the check itself catches an unknown flag, a stray value, a missing value, an unknown --set key and an undefined $(VAR)', () => {
    const problems = commandLineProblems(
      program,
      { where: 'example', command: undefined, args: ['run', '--no-such-flag', 'x', '--leader-elect', 'true', '--set', 'nope=1', '--identity', '$(MISSING)', '--out'], env: new Set() },
      templateValues,
    );
    expect(problems).toEqual([
      'run has no flag --no-such-flag',
      '"true" follows no flag that takes a value',
      '--set nope=1: "nope" is not a value of templates/default.yaml',
      '--out needs a value',
      '"$(MISSING)" refers to $(MISSING), which is not an env var of the container',
    ]);
    expect(commandLineProblems(program, { where: 'example', command: undefined, args: ['frobnicate'], env: new Set() }, templateValues)[0]).toMatch(/^"frobnicate" is not a command of the CLI/);
  });
});
