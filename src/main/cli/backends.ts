// `haptic-reconciler backends HOST:PORT...`: echo backends for trying `run --haproxy` on one
// machine. Runs until SIGINT or SIGTERM.
import type { Command } from 'commander';
import { parseBackendAddress, startEchoBackend, type EchoBackend } from '../tools/echo-backends.js';

export function registerBackends(program: Command): void {
  program
    .command('backends')
    .description('echo HTTP backends on the given addresses (answer with their address and the request) for local trials')
    .argument('<address...>', 'HOST:PORT to listen on, e.g. 127.0.0.1:9001')
    .action(async (addresses: string[]) => {
      const backends: EchoBackend[] = [];
      for (const text of addresses) {
        const { host, port } = parseBackendAddress(text);
        const backend = await startEchoBackend(host, port);
        backends.push(backend);
        console.log(`echo backend listening on ${backend.address}`);
      }
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await Promise.all(backends.map((b) => b.close()));
    });
}
