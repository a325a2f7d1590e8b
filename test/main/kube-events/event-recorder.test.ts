// Kubernetes Events for rejected objects, from the engine's real renders (inline pipeline, fake
// clock) to the fake API server: one Warning per object and reason however many renders repeat
// it, with the stable reason; a Normal Accepted once fixed; a repeat after that updates the
// Event's series; messages capped; nothing from a follower.
import { beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/main/engine.js';
import { newEvent } from '../../../src/main/events/events.js';
import { KubeEventRecorder } from '../../../src/main/kube-events/event-recorder.js';
import { capNote, MAX_NOTE_BYTES } from '../../../src/main/kube-events/object-findings.js';
import type { Elector } from '../../../src/main/leadership/elector.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, rule, service, storeNameFor, tlsSecret } from '../../helpers/cluster.js';
import type { FakeClock } from '../../helpers/fake-clock.js';
import type { FakeKubeApi} from '../../helpers/fake-kube-api.js';
import { type FakeObject } from '../../helpers/fake-kube-api.js';
import { silentLogger } from '../../helpers/loggers.js';
import { drive, useStatusApi, type RecordedApis } from '../../helpers/status-api.js';

const fixture = useStatusApi('kube-events-');
let api: FakeKubeApi;
let clock: FakeClock;
let apis: RecordedApis;
beforeEach(() => {
  ({ api, clock, apis } = fixture);
});

const web = (ns: string): KubeObject[] => [service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.0.1'])];
const at = (iso: string) => ({ creationTimestamp: iso });

/** Four tenants, each with one kind of problem. */
function brokenCluster(): KubeObject[] {
  return [
    ingress('owner', 'site', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, at('2024-01-01T00:00:00Z')),
    ...web('owner'),
    // Same host from another namespace, newer: HostConflict naming namespace owner.
    ingress('thief', 'grab', { rules: [rule('shop.example.com', { path: '/admin', service: 'web' })] }, at('2024-06-01T00:00:00Z')),
    ...web('thief'),
    // A bad security annotation value: InvalidAnnotation (the Ingress is rejected).
    ingress('anno', 'open', { rules: [rule('anno.example.com', { path: '/', service: 'web' })] }, { annotations: { 'haproxy.org/allow-list': '10.0.0.0/8, 10.0.0.300' } }),
    ...web('anno'),
    // A TLS Secret whose certificate is not one: InvalidTLS on the Secret and on the Ingress using it.
    ingress('tls', 'secure', { rules: [rule('tls.example.com', { path: '/', service: 'web' })], tls: [{ hosts: ['tls.example.com'], secretName: 'cert' }] }),
    ...web('tls'),
    tlsSecret('tls', 'cert', { 'tls.crt': Buffer.from('not a certificate').toString('base64'), 'tls.key': Buffer.from('not a key').toString('base64') }),
    // A Service that does not exist: BackendNotFound.
    ingress('orphan', 'lost', { rules: [rule('lost.example.com', { path: '/', service: 'gone' })] }),
  ];
}

function fixes(): KubeObject[] {
  return [
    ingress('thief', 'grab', { rules: [rule('thief.example.com', { path: '/', service: 'web' })] }, at('2024-06-01T00:00:00Z')),
    ingress('anno', 'open', { rules: [rule('anno.example.com', { path: '/', service: 'web' })] }, { annotations: { 'haproxy.org/allow-list': '10.0.0.0/8' } }),
    tlsSecret('tls', 'cert'),
    service('orphan', 'gone'),
  ];
}

const followerElector: Elector = {
  identity: 'follower',
  run: (_callbacks, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
};

async function harness(objects: KubeObject[], elector?: Elector) {
  const set = await defaultTemplateSet();
  const engine = await Engine.create({ templateSet: set, pipeline: 'inline', logger: silentLogger(), clock, ...(elector === undefined ? {} : { elector }) });
  const put = (list: KubeObject[]): void => {
    for (const object of list) {
      // As the API server would hand them out: with a uid the Event's `regarding` names.
      const stored = { ...object, metadata: { ...object.metadata, uid: `uid-${object.metadata.namespace}-${object.metadata.name}` } };
      engine.stores.store(storeNameFor(object, set.stores)).upsert(stored);
    }
  };
  put(objects);
  const recorder = new KubeEventRecorder({ bus: engine.bus, stores: engine.stores, api: apis.events, clock, logger: silentLogger(), identity: 'replica-1' });
  engine.addLeaderComponent(recorder);
  const stop = new AbortController();
  const running = engine.start(stop.signal);
  const renders = (): number => engine.coordinator.stats.renders;
  /** Triggers `n` renders and waits for them and for every Event write they caused. */
  const render = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const before = renders();
      engine.bus.publish(newEvent('drift.prevention.triggered', { timeSinceLastDeploymentMs: 0 }));
      await drive(clock, apis, () => renders() > before);
    }
    await drive(clock, apis, () => apis.inFlight() === 0);
    await apis.idle();
  };
  const close = async (): Promise<void> => {
    stop.abort();
    await running;
    await engine.close();
  };
  return { engine, recorder, put, render, renders, close };
}

type EventObject = FakeObject & { type?: string; reason?: string; note?: string; regarding?: { kind?: string; namespace?: string; name?: string; uid?: string }; series?: { count?: number } };
const events = (): EventObject[] => api.events() as EventObject[];
const summary = (list: EventObject[]): string[] => list.map((e) => `${e.type} ${e.reason} ${e.regarding?.kind} ${e.regarding?.namespace}/${e.regarding?.name}`).sort();

describe('KubeEventRecorder', () => {
  it('writes one Warning per rejected object and reason across 20 renders, with the stable reasons, then one Normal Accepted once fixed', async () => {
    const h = await harness(brokenCluster());
    await drive(clock, apis, () => h.renders() >= 1);
    await h.render(20);
    expect(h.renders()).toBeGreaterThanOrEqual(21);
    expect(summary(events())).toEqual([
      'Warning BackendNotFound Ingress orphan/lost',
      'Warning HostConflict Ingress thief/grab',
      'Warning InvalidAnnotation Ingress anno/open',
      'Warning InvalidTLS Ingress tls/secure',
      'Warning InvalidTLS Secret tls/cert',
    ]);
    const conflict = events().find((e) => e.reason === 'HostConflict');
    expect(conflict?.note).toMatch(/^Ingress thief\/grab: route shop\.example\.com\/admin is refused: .*belongs to namespace owner/);
    expect(conflict?.regarding).toMatchObject({ kind: 'Ingress', namespace: 'thief', name: 'grab', uid: 'uid-thief-grab' });
    expect(conflict?.metadata.namespace).toBe('thief');
    expect(events().find((e) => e.reason === 'InvalidAnnotation')?.note).toContain('allow-list entry "10.0.0.300"');
    const writesBefore = api.requests.filter((r) => r.path.includes('/events')).length;

    h.put(fixes());
    await h.render(20);
    const accepted = events().filter((e) => e.type === 'Normal');
    expect(summary(accepted)).toEqual([
      'Normal Accepted Ingress anno/open',
      'Normal Accepted Ingress orphan/lost',
      'Normal Accepted Ingress thief/grab',
      'Normal Accepted Ingress tls/secure',
      'Normal Accepted Secret tls/cert',
    ]);
    expect(api.requests.filter((r) => r.path.includes('/events')).length).toBe(writesBefore + 5);
    await h.close();
  }, 30_000);

  it('updates the series of the same Event when a rejection comes back, rather than writing another', async () => {
    const h = await harness([...brokenCluster().filter((o) => o.metadata.namespace === 'orphan')]);
    await drive(clock, apis, () => h.renders() >= 1);
    await h.render(1);
    h.put([service('orphan', 'gone')]);
    await h.render(1);
    h.engine.stores.store('services').delete('orphan/gone');
    await h.render(3);
    const warnings = events().filter((e) => e.type === 'Warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.series?.count).toBe(2);
    expect(api.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/events/'))).toHaveLength(1);
    await h.close();
  }, 30_000);

  it('limits the Events of an object that keeps flapping to its burst, then one a minute', async () => {
    const h = await harness([...brokenCluster().filter((o) => o.metadata.namespace === 'orphan')]);
    await drive(clock, apis, () => h.renders() >= 1);
    for (let i = 0; i < 10; i++) {
      h.put([service('orphan', 'gone')]);
      await h.render(1);
      h.engine.stores.store('services').delete('orphan/gone');
      await h.render(1);
    }
    const writes = (): number => api.requests.filter((r) => r.path.includes('/events')).length;
    expect(writes()).toBe(5);
    expect(h.recorder.stats.suppressed).toBe(20 + 1 - 5);
    await clock.advance(60_000);
    h.put([service('orphan', 'gone')]);
    await h.render(1);
    expect(writes()).toBe(6);
    await h.close();
  }, 30_000);

  it('paces Events over all objects: a burst of 50, then 10 a second', async () => {
    const lost = Array.from({ length: 80 }, (_, i) => ingress('orphan', `lost-${String(i).padStart(2, '0')}`, { rules: [rule(`l${i}.example.com`, { path: '/', service: 'gone' })] }));
    const h = await harness(lost);
    const start = clock.now();
    await drive(clock, apis, () => api.events().length === 80 && apis.inFlight() === 0);
    const offsets = apis.eventTimes.map((t) => t - start);
    expect(offsets.filter((t) => t === 0)).toHaveLength(50);
    offsets.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(Math.max(0, (i - 49) * 100) - 1));
    expect(offsets.at(-1)).toBeGreaterThanOrEqual(3000);
    await h.close();
  }, 30_000);

  it('writes nothing on a follower', async () => {
    const h = await harness(brokenCluster(), followerElector);
    await h.engine.whenStarted();
    h.engine.bus.publish(newEvent('drift.prevention.triggered', { timeSinceLastDeploymentMs: 0 }));
    await drive(clock, apis, () => apis.inFlight() === 0);
    await clock.advance(60_000);
    expect(h.renders()).toBe(0);
    expect(api.requests).toHaveLength(0);
    await h.close();
  });

  it('caps a note at 1 KiB on a character boundary', () => {
    const note = capNote(`Ingress a/b: ${'é'.repeat(2000)}`);
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(MAX_NOTE_BYTES);
    expect(note.endsWith('...')).toBe(true);
  });
});
