#!/usr/bin/env node
// Command line entry: `haptic-reconciler <command>`. Each command lives in its own file and is
// thin: it wires the engine's components together and prints; all logic lives in the components.
import { Command } from 'commander';
import { registerAgent } from './agent.js';
import { registerBackends } from './backends.js';
import { registerDemo } from './demo.js';
import { registerLoadtest } from './loadtest.js';
import { registerRender } from './render.js';
import { registerRun } from './run.js';
import { registerSoak } from './soak.js';

const program = new Command();
program
  .name('haptic-reconciler')
  .description('Turns Kubernetes cluster changes into validated HAProxy configuration, off the main thread.')
  .version('0.1.0');
registerRender(program);
registerRun(program);
registerAgent(program);
registerDemo(program);
registerLoadtest(program);
registerSoak(program);
registerBackends(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  console.error(`error: ${(error as Error).message}`);
  process.exitCode = 1;
}
