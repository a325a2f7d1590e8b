// `npm run <script> -- --help` prints the script's usage and exits 0 for every script that runs
// the product or a benchmark, without starting what it would run (each call is bounded well below
// any benchmark's running time). A new script must be listed here, or among the tool scripts.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-process.js';

const exec = promisify(execFile);

/** Scripts that run the product or a benchmark, and the usage line each prints. */
const WITH_HELP: Readonly<Record<string, RegExp>> = {
  start: /^Usage: haptic-reconciler demo /m,
  loadtest: /^Usage: haptic-reconciler loadtest /m,
  soak: /^Usage: haptic-reconciler soak /m,
  bench: /^Usage: npm run bench -- \[options\] \[suites\.\.\.\]/m,
  'bench:scale': /^Usage: npm run bench:scale -- \[options\] \[sizes\.\.\.\]/m,
  'bench:latency': /^Usage: npm run bench:latency -- \[options\] \[sizes\.\.\.\]/m,
  'bench:fleet': /^Usage: npm run bench:fleet -- \[options\] \[sizes\.\.\.\]/m,
  'bench:agent-apply': /^Usage: npm run bench:agent-apply -- \[options\]$/m,
  'bench:gate': /^Usage: npm run bench:gate -- \[options\] \[sizes\.\.\.\]/m,
  'bench:live-heap': /^Usage: npm run bench:live-heap -- \[options\] \[seconds\]/m,
};
/** Scripts of the tool chain (npm, tsc, eslint, vitest), whose options are their tools'. */
const TOOLS = ['build', 'prepare', 'typecheck', 'lint', 'test'];

describe('npm scripts', () => {
  it('are each either listed with their usage or a tool script', async () => {
    const { scripts } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(Object.keys(scripts).sort()).toEqual([...Object.keys(WITH_HELP), ...TOOLS].sort());
  });

  it.each(Object.entries(WITH_HELP))('npm run %s -- --help prints the usage and exits 0 without running it', async (script, usage) => {
    const { stdout } = await exec('npm', ['run', '--silent', script, '--', '--help'], { cwd: REPO_ROOT, timeout: 30_000 });
    expect(stdout).toMatch(usage);
    expect(stdout).toMatch(/-h, --help/);
  });
});
