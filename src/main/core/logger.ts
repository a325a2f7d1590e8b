// The default logger for components that were given none: pino to stderr at LOG_LEVEL
// (default `info`), so stdout stays free for command output.
import { pino, type Logger } from 'pino';

let fallback: Logger | undefined;

export function defaultLogger(): Logger {
  fallback ??= pino(
    { name: 'haptic-reconciler', level: process.env.LOG_LEVEL ?? 'info' },
    pino.destination({ fd: 2, sync: false }),
  );
  return fallback;
}

/** A logger that discards everything, for tests and quiet embedding. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
