// The HTTP endpoints over real HTTP on 127.0.0.1, port 0: /metrics, /healthz, /readyz, 404/405,
// address parsing, `off`, and a close() that neither hangs on keep-alive connections nor on a
// stuck request (driven by a fake clock, no sleeping).
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpEndpoints, parseListenAddress, type HttpEndpoints, type HttpEndpointsOptions } from '../../../src/main/metrics/http-endpoints.js';
import { ControllerMetrics } from '../../../src/main/metrics/metrics.js';
import { deferred, track } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

function call(endpoints: HttpEndpoints, path: string, method = 'GET', agent?: Agent): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: endpoints.port, path, method, ...(agent === undefined ? { agent: false } : { agent }) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Lets pending socket events run: yields to the event loop's check phase, never to a timer. */
async function ioTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const opened: HttpEndpoints[] = [];

async function serve(options: Partial<HttpEndpointsOptions> = {}): Promise<HttpEndpoints> {
  const endpoints = await startHttpEndpoints({
    address: '127.0.0.1:0',
    metrics: new ControllerMetrics({ defaultMetrics: false }),
    readiness: () => ({ ready: true }),
    logger: silentLogger(),
    ...options,
  });
  opened.push(endpoints);
  return endpoints;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((e) => e.close()));
});

describe('HTTP endpoints', () => {
  it('serves /metrics as Prometheus text with its content type', async () => {
    const metrics = new ControllerMetrics({ defaultMetrics: false });
    metrics.countHaproxyRestart();
    const endpoints = await serve({ metrics });

    const reply = await call(endpoints, '/metrics');

    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe(metrics.contentType);
    expect(reply.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(reply.body).toContain('haptic_haproxy_restarts_total 1');
  });

  it('answers /healthz with 200 "ok" while the process serves', async () => {
    const endpoints = await serve({ readiness: () => ({ ready: false }) });

    const reply = await call(endpoints, '/healthz');

    expect(reply.status).toBe(200);
    expect(reply.body).toBe('ok\n');
  });

  it('answers /healthz with 503 and what stopped as JSON once liveness fails', async () => {
    let alive = true;
    const endpoints = await serve({ liveness: () => (alive ? { alive } : { alive, stopped: { Deployer: 'failed: disk on fire' } }) });
    expect((await call(endpoints, '/healthz')).status).toBe(200);

    alive = false;
    const reply = await call(endpoints, '/healthz');

    expect(reply.status).toBe(503);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(JSON.parse(reply.body)).toEqual({ alive: false, stopped: { Deployer: 'failed: disk on fire' } });
  });

  it('answers /healthz with 503 when the liveness check throws', async () => {
    const endpoints = await serve({
      liveness: () => {
        throw new Error('boom');
      },
    });
    expect((await call(endpoints, '/healthz')).status).toBe(503);
  });

  it('answers /readyz with 503 and a JSON detail until readiness flips, then with 200', async () => {
    let ready = false;
    const endpoints = await serve({ readiness: () => ({ ready, detail: { synchronized: ready, leader: false } }) });

    const before = await call(endpoints, '/readyz');
    expect(before.status).toBe(503);
    expect(before.headers['content-type']).toBe('application/json');
    expect(JSON.parse(before.body)).toEqual({ ready: false, detail: { synchronized: false, leader: false } });

    ready = true;
    const after = await call(endpoints, '/readyz');
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body)).toMatchObject({ ready: true });
  });

  it('answers /readyz with 503 when the readiness check throws', async () => {
    const endpoints = await serve({
      readiness: () => {
        throw new Error('boom');
      },
    });

    const reply = await call(endpoints, '/readyz');

    expect(reply.status).toBe(503);
    expect(reply.body).not.toContain('boom');
  });

  it('answers 500 on /metrics when collecting fails, and keeps serving', async () => {
    const endpoints = await serve({ metrics: { contentType: 'text/plain', metrics: () => Promise.reject(new Error('collect failed')) } });

    expect((await call(endpoints, '/metrics')).status).toBe(500);
    expect((await call(endpoints, '/healthz')).status).toBe(200);
  });

  it('answers 404 for other paths and ignores a query string on known ones', async () => {
    const endpoints = await serve();

    expect((await call(endpoints, '/')).status).toBe(404);
    expect((await call(endpoints, '/metrics/extra')).status).toBe(404);
    expect((await call(endpoints, '/healthz?verbose=1')).status).toBe(200);
  });

  it('answers 405 with an Allow header for methods other than GET, and serves HEAD like GET', async () => {
    const endpoints = await serve();

    const post = await call(endpoints, '/metrics', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect((await call(endpoints, '/readyz', 'DELETE')).status).toBe(405);

    const head = await call(endpoints, '/healthz', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('listens on port 0 and reports the address it bound', async () => {
    const endpoints = await serve({ address: '127.0.0.1:0' });

    expect(endpoints.port).toBeGreaterThan(0);
    expect(endpoints.address).toBe(`127.0.0.1:${endpoints.port}`);
  });

  it('rejects with an error naming the address when the port is taken', async () => {
    const first = await serve();

    await expect(serve({ address: first.address as string })).rejects.toThrow(`cannot listen on ${first.address}`);
  });

  it("returns a no-op handle for 'off' and listens on nothing", async () => {
    const endpoints = await startHttpEndpoints({
      address: 'off',
      metrics: new ControllerMetrics({ defaultMetrics: false }),
      readiness: () => ({ ready: true }),
      logger: silentLogger(),
    });

    expect(endpoints.address).toBeUndefined();
    expect(endpoints.port).toBeUndefined();
    await expect(endpoints.close()).resolves.toBeUndefined();
  });

  it('closes promptly while a keep-alive connection sits idle, and refuses connections afterwards', async () => {
    const endpoints = await serve();
    const agent = new Agent({ keepAlive: true });
    try {
      expect((await call(endpoints, '/healthz', 'GET', agent)).status).toBe(200);

      await endpoints.close();

      await expect(call(endpoints, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      agent.destroy();
    }
  });

  it('cuts a request still running closeTimeoutMs after close()', async () => {
    const clock = new FakeClock();
    const requested = deferred<void>();
    const stuck = deferred<string>();
    const metrics = {
      contentType: 'text/plain',
      metrics: (): Promise<string> => {
        requested.resolve();
        return stuck.promise;
      },
    };
    const endpoints = await serve({ clock, closeTimeoutMs: 2000, metrics });
    const inFlight = call(endpoints, '/metrics').catch((error: unknown) => error);
    await requested.promise;

    const closing = track(endpoints.close());
    await clock.advance(1999);
    await ioTurns(5);
    expect(closing.done).toBe(false);
    await clock.advance(1);
    await closing.promise;

    expect(await inFlight).toBeInstanceOf(Error);
  });
});

describe('parseListenAddress', () => {
  it.each([
    ['127.0.0.1:9100', { host: '127.0.0.1', port: 9100 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
    ['localhost:8080', { host: 'localhost', port: 8080 }],
    ['[::1]:9100', { host: '::1', port: 9100 }],
    ['[::]:65535', { host: '::', port: 65535 }],
  ])('parses %s', (value, expected) => {
    expect(parseListenAddress(value)).toEqual(expected);
  });

  it("parses 'off'", () => {
    expect(parseListenAddress('off')).toBe('off');
  });

  it.each(['', '9100', ':9100', '127.0.0.1', '127.0.0.1:', '127.0.0.1:65536', '::1:9100', '[::1]', '[nope]:9100', 'host:port', '127.0.0.1:9100/metrics', ' 127.0.0.1:9100', 'OFF'])(
    'rejects %j with a TypeError naming the value',
    (value) => {
      expect(() => parseListenAddress(value)).toThrow(TypeError);
      expect(() => parseListenAddress(value)).toThrow(JSON.stringify(value));
    },
  );
});
