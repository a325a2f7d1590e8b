// The module a pool's worker threads load: the one an embedder gives (PoolPipelineOptions.worker),
// or the built-in src/worker/pool-worker.ts, with the Node flags it needs.
/** The module each worker thread of the pool loads. */
export interface PoolWorkerModule {
  /**
   * An absolute path or a file URL. Its default export renders a `RenderTask`, and at load it
   * announces its control port as `src/worker/pool-worker.ts` does; a module that wraps that one
   * (imports it and calls its `render`) inherits both. A module that throws at load makes the
   * next `run()` hang, so keep load-time code to what pool-worker.ts does.
   * @example new URL('./my-worker.js', import.meta.url)
   */
  readonly filename: string | URL;
  /**
   * Node flags of the worker threads.
   * @default the built-in module's: `['--import', 'tsx']` when this file runs from `.ts` source, else `[]`
   */
  readonly execArgv?: readonly string[];
  /** `worker_threads.workerData` of each worker; a SharedArrayBuffer in it stays shared with this thread. */
  readonly workerData?: unknown;
}

/** The piscina options naming the worker module: the one given, or the built-in one. */
export function workerModule(given: PoolWorkerModule | undefined): { filename: string; execArgv: string[]; workerData?: unknown } {
  const builtIn = workerEntry();
  if (given === undefined) return builtIn;
  const { filename, execArgv = builtIn.execArgv, workerData } = given;
  if (typeof filename !== 'string' && !(filename instanceof URL)) {
    throw new TypeError(`worker.filename must be an absolute path or a file URL, got ${String(filename)}`);
  }
  return { filename: filename instanceof URL ? filename.href : filename, execArgv: [...execArgv], ...(workerData === undefined ? {} : { workerData }) };
}

/** The worker module next to this one: `.ts` under tsx or vitest (loaded through tsx), `.js` once built. */
function workerEntry(): { filename: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const filename = new URL(`../../../worker/pool-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url).href;
  return { filename, execArgv: fromSource ? ['--import', 'tsx'] : [] };
}
