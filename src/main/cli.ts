// Command line entry: `haptic-reconciler <command>`.
import { Command } from 'commander';

const program = new Command();
program
  .name('haptic-reconciler')
  .description('Turns Kubernetes cluster changes into validated HAProxy configuration, off the main thread.')
  .version('0.1.0');

await program.parseAsync(process.argv);
