// ManifestSource: a directory of Kubernetes YAML/JSON as a Source. It lists every file once, then
// watches the directory recursively (chokidar) and re-reads only the files that changed, turning
// their contents into upserts and deletes. A file that is deleted, or that no longer holds an
// object, deletes that object. A file that does not parse is reported with its line and changes
// nothing: the objects it held stay until a good version of it arrives. Events for one file are
// debounced briefly, so an editor's save in several writes is read once; the wait is capped, so a
// file rewritten more often than the settle time is still read while it keeps changing.
import { watch, type FSWatcher } from 'chokidar';
import { stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import type { Logger } from 'pino';
import type { KubeObject, StoreDefinition } from '../../../worker/protocol.js';
import { objectKey } from '../../../worker/store/indexed-store.js';
import type { Clock, TimerHandle } from '../../core/clock.js';
import { StartupError } from '../../core/errors.js';
import type { Source, SourceSink } from '../source.js';
import { isManifestFile, listManifestFiles, parseManifest, readManifestFile, type ManifestLimits } from './manifest-loader.js';

export interface ManifestSourceOptions {
  readonly dir: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Quiet time after a file event before the file is read. @default 50 */
  readonly settleMs?: number;
  /** A file that keeps changing is read at the latest this long after its first unread event. @default 500 */
  readonly maxSettleMs?: number;
  readonly limits?: ManifestLimits;
}

/** An object a file holds: its store, key, and canonical text (to skip unchanged re-saves). */
interface Held {
  readonly store: string;
  readonly key: string;
  readonly object: KubeObject;
  readonly text: string;
}

export class ManifestSource implements Source {
  readonly kind = 'manifests';
  readonly #options: ManifestSourceOptions;
  readonly #logger: Logger;
  /** What each file holds, by `store\0key`. */
  readonly #files = new Map<string, Map<string, Held>>();
  /** Files per `store\0key`, oldest claim first: the object stays while any file holds it. */
  readonly #owners = new Map<string, string[]>();
  /** Files waiting to be read: since when (`clock.monotonic()`), and the timer that reads them. */
  readonly #pending = new Map<string, { readonly since: number; readonly timer: TimerHandle }>();

  constructor(options: ManifestSourceOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'manifest-source' });
  }

  async run(resources: readonly StoreDefinition[], sink: SourceSink, signal: AbortSignal): Promise<void> {
    const { dir } = this.#options;
    if (signal.aborted) return;
    // Watch first, so that nothing written during the initial listing is missed; events that
    // arrive meanwhile only re-read a file.
    const watcher = watch(dir, { ignoreInitial: true, persistent: true, followSymlinks: false, ignored: (path, stats) => stats?.isFile() === true && !isManifestFile(path) });
    const ready = new Promise<void>((resolve, reject) => {
      watcher.once('ready', resolve);
      watcher.once('error', reject);
    });
    // Awaited below; when the listing fails first, its rejection must not go unhandled.
    ready.catch(() => undefined);
    try {
      const files = await listManifestFiles(dir).catch((error: NodeJS.ErrnoException) => {
        throw error.code === 'ENOENT' ? new StartupError(`manifest directory ${dir} does not exist`, { cause: error }) : error;
      });
      for (const file of files) await this.#read(file, resources, sink);
      for (const resource of resources) sink.synced(resource.name);
      await ready;
      watcher.on('add', (path) => this.#schedule(path, resources, sink));
      watcher.on('change', (path) => this.#schedule(path, resources, sink));
      watcher.on('unlink', (path) => this.#schedule(path, resources, sink));
      watcher.on('unlinkDir', (path) => {
        for (const file of [...this.#files.keys()]) if (file.startsWith(path + sep)) this.#schedule(file, resources, sink);
      });
      // chokidar drops a change whose mtime equals the previous one once the file's atime moved
      // past it (a write right after our own read, within the timestamp granularity): the raw
      // fs.watch events still name the file, and a re-read of an unchanged file reports nothing.
      watcher.on('raw', (_event, name, details) => {
        const watched = (details as { watchedPath?: unknown }).watchedPath;
        if (typeof name !== 'string' || name === '' || typeof watched !== 'string') return;
        this.#schedule(basename(watched) === name ? watched : join(watched, name), resources, sink);
      });
      watcher.on('error', (error) => sink.problem(undefined, `watching ${dir}: ${(error as Error).message}`));
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    } finally {
      for (const { timer } of this.#pending.values()) this.#options.clock.clearTimeout(timer);
      this.#pending.clear();
      await closeWatcher(watcher);
    }
  }

  #schedule(file: string, resources: readonly StoreDefinition[], sink: SourceSink): void {
    if (!isManifestFile(file)) return;
    const { clock, settleMs = 50, maxSettleMs = 500 } = this.#options;
    const pending = this.#pending.get(file);
    clock.clearTimeout(pending?.timer);
    // Without the cap, a file written again within every settle time would never be read.
    const since = pending?.since ?? clock.monotonic();
    const wait = Math.max(0, Math.min(settleMs, since + maxSettleMs - clock.monotonic()));
    const timer = clock.setTimeout(() => {
      this.#pending.delete(file);
      this.#read(file, resources, sink).catch((error: unknown) => sink.problem(undefined, `${this.#name(file)}: ${(error as Error).message}`));
    }, wait);
    this.#pending.set(file, { since, timer });
  }

  /** Reads one file (gone: holds nothing) and reports what changed in what it holds. */
  async #read(file: string, resources: readonly StoreDefinition[], sink: SourceSink): Promise<void> {
    const name = this.#name(file);
    let text: string | undefined;
    if (await exists(file)) {
      const read = await readManifestFile(file, name, this.#options.limits);
      if ('error' in read) {
        sink.problem(undefined, `${read.error}; the objects it held stay`);
        return;
      }
      text = read.text;
    }
    const next = new Map<string, Held>();
    if (text !== undefined) {
      const parsed = parseManifest(text, name, resources);
      if (parsed.broken.length > 0) {
        for (const error of parsed.broken) sink.problem(undefined, `${error}; the file changes nothing until it parses`);
        return;
      }
      for (const error of parsed.errors) sink.problem(undefined, error);
      for (const { store, object } of parsed.objects) {
        const key = objectKey(object);
        next.set(`${store}\0${key}`, { store, key, object, text: JSON.stringify(object) });
      }
    }
    this.#logger.debug({ file: name, objects: next.size }, 'manifest read');
    this.#apply(file, next, sink);
  }

  #apply(file: string, next: Map<string, Held>, sink: SourceSink): void {
    const previous = this.#files.get(file) ?? new Map<string, Held>();
    if (next.size === 0) this.#files.delete(file);
    else this.#files.set(file, next);
    for (const [id, held] of next) {
      const owners = this.#owners.get(id) ?? [];
      if (!owners.includes(file)) owners.push(file);
      this.#owners.set(id, owners);
      if (previous.get(id)?.text !== held.text) sink.upsert(held.store, held.object);
    }
    for (const [id, held] of previous) {
      if (next.has(id)) continue;
      const owners = (this.#owners.get(id) ?? []).filter((owner) => owner !== file);
      if (owners.length === 0) {
        this.#owners.delete(id);
        sink.delete(held.store, held.key);
        continue;
      }
      // Another file still holds the object: its version is the one that stays.
      this.#owners.set(id, owners);
      const survivor = this.#files.get(owners[owners.length - 1] as string)?.get(id);
      if (survivor !== undefined) sink.upsert(survivor.store, survivor.object);
    }
  }

  #name(file: string): string {
    return relative(process.cwd(), file) || file;
  }
}

/** A regular file at `path` (a directory or nothing there: false). */
async function exists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function closeWatcher(watcher: FSWatcher): Promise<void> {
  try {
    await watcher.close();
  } catch {
    // Closing a watcher whose directory vanished can fail; nothing is left open either way.
  }
}
