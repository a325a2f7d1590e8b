// Asks a real HAProxy for its verdict on a config: `haproxy -c -f <file>` in a child process, so
// the main thread never waits on it. Used by `render --check`, the tests, and the render gate.
import { execFile } from 'node:child_process';

export interface HaproxyVerdict {
  readonly ok: boolean;
  /** HAProxy ran and rejected the config (as opposed to: it could not run at all). */
  readonly refused: boolean;
  readonly message: string;
}

export function haproxyBinary(): string {
  return process.env.HAPROXY_BIN ?? 'haproxy';
}

/** Whether the HAProxy binary can be run; resolves to its version line or null. */
export function haproxyVersion(binary: string = haproxyBinary()): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(binary, ['-v'], { timeout: 10_000 }, (error, stdout) => {
      resolve(error ? null : (stdout.split('\n')[0] ?? '').trim());
    });
  });
}

export function checkConfigFile(configFile: string, binary: string = haproxyBinary(), timeoutMs = 60_000): Promise<HaproxyVerdict> {
  return new Promise((resolve) => {
    execFile(binary, ['-c', '-f', configFile], { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (error === null) {
        resolve({ ok: true, refused: false, message: output || 'Configuration file is valid' });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      if (typeof code === 'string' || error.killed) {
        // ENOENT, EACCES, a timeout: HAProxy did not judge the config.
        resolve({ ok: false, refused: false, message: `haproxy could not run: ${error.message}` });
        return;
      }
      resolve({ ok: false, refused: true, message: output || error.message });
    });
  });
}
