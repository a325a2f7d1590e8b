import { mkdir, mkdtemp, rm, unlink, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/main/core/clock.js';
import { ManifestSource } from '../../../src/main/sources/manifest/manifest-source.js';
import type { SourceSink } from '../../../src/main/sources/source.js';
import type { KubeObject, StoreDefinition } from '../../../src/worker/protocol.js';
import { eventually } from '../../helpers/eventually.js';
import { silentLogger } from '../../helpers/loggers.js';

const DEFINITIONS: StoreDefinition[] = [
  { name: 'services', apiVersion: 'v1', kind: 'Service', indexBy: ['metadata.namespace', 'metadata.name'] },
  { name: 'ingresses', apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', indexBy: ['metadata.namespace', 'metadata.name'] },
];

/** A sink that records what the source reported and keeps the resulting objects. */
class RecordingSink implements SourceSink {
  readonly objects = new Map<string, KubeObject>();
  readonly syncedResources: string[] = [];
  readonly problems: string[] = [];
  upserts = 0;
  deletes = 0;

  upsert(resource: string, object: KubeObject): void {
    this.upserts++;
    this.objects.set(`${resource}/${object.metadata.namespace ?? ''}/${object.metadata.name}`, object);
  }

  delete(resource: string, key: string): void {
    this.deletes++;
    this.objects.delete(`${resource}/${key}`);
  }

  synced(resource: string): void {
    this.syncedResources.push(resource);
  }

  problem(_resource: string | undefined, message: string): void {
    this.problems.push(message);
  }
}

const service = (name: string, port = 80): string => `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: shop\nspec:\n  ports:\n  - port: ${port}\n`;

let dir: string;
let stop: AbortController;
let running: Promise<void> | undefined;

afterEach(async () => {
  stop?.abort();
  await running;
  await rm(dir, { recursive: true, force: true });
});

async function start(files: Record<string, string>, timing: { settleMs?: number; maxSettleMs?: number } = {}): Promise<RecordingSink> {
  dir = await mkdtemp(join(tmpdir(), 'manifest-source-'));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  const sink = new RecordingSink();
  stop = new AbortController();
  running = new ManifestSource({ dir, clock: systemClock, logger: silentLogger(), settleMs: 10, ...timing }).run(DEFINITIONS, sink, stop.signal);
  await eventually(() => sink.syncedResources.length === DEFINITIONS.length, 'the initial list');
  return sink;
}

describe('ManifestSource', () => {
  it('lists every file under the directory, nested ones too, then reports each resource synced', async () => {
    const sink = await start({ 'a.yaml': service('a'), 'nested/deeper/b.yml': service('b'), 'ignored.txt': service('c') });
    expect([...sink.objects.keys()].sort()).toEqual(['services/shop/a', 'services/shop/b']);
    expect(sink.syncedResources.sort()).toEqual(['ingresses', 'services']);
  });

  it('picks up an edited file and re-reads only that file', async () => {
    const sink = await start({ 'a.yaml': service('a'), 'b.yaml': service('b') });
    const before = sink.upserts;
    await writeFile(join(dir, 'a.yaml'), service('a', 8080));
    await eventually(() => (sink.objects.get('services/shop/a')?.spec as { ports: { port: number }[] }).ports[0]?.port === 8080, 'the edit');
    expect(sink.upserts).toBe(before + 1);
  });

  it('adds the objects of a new file and deletes those of a removed one', async () => {
    const sink = await start({ 'a.yaml': service('a') });
    await writeFile(join(dir, 'new.yaml'), service('n'));
    await eventually(() => sink.objects.has('services/shop/n'), 'the new file');
    await unlink(join(dir, 'a.yaml'));
    await eventually(() => !sink.objects.has('services/shop/a'), 'the deletion');
    expect(sink.objects.has('services/shop/n')).toBe(true);
  });

  it('deletes an object a file no longer holds, and keeps the file\'s others', async () => {
    const sink = await start({ 'two.yaml': `${service('a')}---\n${service('b')}` });
    await writeFile(join(dir, 'two.yaml'), service('b'));
    await eventually(() => !sink.objects.has('services/shop/a'), 'the dropped object');
    expect(sink.objects.has('services/shop/b')).toBe(true);
  });

  it('reports a file that does not parse with its line and keeps what it held; the next good edit goes through', async () => {
    const sink = await start({ 'a.yaml': service('a') });
    await writeFile(join(dir, 'a.yaml'), 'apiVersion: v1\nkind: Service\nmetadata:\n  name: [unclosed\n');
    await eventually(() => sink.problems.length > 0, 'the parse problem');
    expect(sink.problems[0]).toMatch(/a\.yaml:\d+: invalid YAML/);
    expect(sink.objects.has('services/shop/a')).toBe(true);
    await writeFile(join(dir, 'a.yaml'), service('renamed'));
    await eventually(() => sink.objects.has('services/shop/renamed'), 'the good edit');
    expect(sink.objects.has('services/shop/a')).toBe(false);
  });

  it('keeps an object two files define until both are gone', async () => {
    const sink = await start({ 'one.yaml': service('same', 1), 'two.yaml': service('same', 2) });
    await unlink(join(dir, 'two.yaml'));
    await eventually(() => (sink.objects.get('services/shop/same')?.spec as { ports: { port: number }[] }).ports[0]?.port === 1, 'the survivor');
    await unlink(join(dir, 'one.yaml'));
    await eventually(() => !sink.objects.has('services/shop/same'), 'the last owner gone');
  });

  it('follows a file saved through a rename, as editors do', async () => {
    const sink = await start({ 'a.yaml': service('a') });
    await writeFile(join(dir, '.a.yaml.swp'), service('a', 9090));
    await rename(join(dir, '.a.yaml.swp'), join(dir, 'a.yaml'));
    await eventually(() => (sink.objects.get('services/shop/a')?.spec as { ports: { port: number }[] }).ports[0]?.port === 9090, 'the renamed save');
  });

  it('reads a file rewritten more often than the settle time while the writes go on', async () => {
    const sink = await start({ 'a.yaml': service('a') }, { settleMs: 50, maxSettleMs: 200 });
    const before = sink.upserts;
    let writing = true;
    let port = 1000;
    // A write every few milliseconds: the file is never quiet for 50 ms.
    const writer = (async () => {
      while (writing) {
        await writeFile(join(dir, 'a.yaml'), service('a', ++port));
        await delay(5);
      }
    })();
    try {
      await eventually(() => sink.upserts > before, 'a read while the file keeps changing', 5_000);
    } finally {
      writing = false;
      await writer;
    }
    await eventually(() => (sink.objects.get('services/shop/a')?.spec as { ports: { port: number }[] }).ports[0]?.port === port, 'the last write');
  });

  it('does not report an unchanged re-save', async () => {
    const sink = await start({ 'a.yaml': service('a'), 'b.yaml': service('b') });
    const before = sink.upserts;
    await writeFile(join(dir, 'a.yaml'), service('a'));
    await writeFile(join(dir, 'b.yaml'), service('b', 81));
    await eventually(() => (sink.objects.get('services/shop/b')?.spec as { ports: { port: number }[] }).ports[0]?.port === 81, 'the b edit');
    expect(sink.upserts).toBe(before + 1);
  });

  it('rejects, naming it, when the directory does not exist', async () => {
    dir = await mkdtemp(join(tmpdir(), 'manifest-source-'));
    const source = new ManifestSource({ dir: join(dir, 'missing'), clock: systemClock, logger: silentLogger() });
    await expect(source.run(DEFINITIONS, new RecordingSink(), new AbortController().signal)).rejects.toThrow(/^manifest directory .*missing does not exist$/);
  });
});
