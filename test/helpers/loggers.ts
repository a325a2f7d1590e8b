// Loggers for tests: the product's silent logger, and a spy logger whose calls can be asserted.
import type { Logger } from 'pino';
import { vi, type Mock } from 'vitest';

export { silentLogger } from '../../src/main/core/logger.js';

export interface SpyLogger {
  /** Pass this where a pino Logger is expected. */
  readonly logger: Logger;
  readonly fatal: Mock;
  readonly error: Mock;
  readonly warn: Mock;
  readonly info: Mock;
  readonly debug: Mock;
  readonly trace: Mock;
  /** `child()` returns the same spies, so calls of every child are recorded here too. */
  readonly child: Mock;
}

/** A pino-shaped object whose every log method is a vitest spy; `child()` returns itself. */
export function spyLogger(): SpyLogger {
  const spies = {
    fatal: vi.fn(),
    error: vi.fn(),
    warn: vi.fn(),
    info: vi.fn(),
    debug: vi.fn(),
    trace: vi.fn(),
    silent: vi.fn(),
    child: vi.fn(),
    level: 'trace',
    isLevelEnabled: () => true,
  };
  spies.child.mockImplementation(() => spies);
  return { ...spies, logger: spies as unknown as Logger };
}
