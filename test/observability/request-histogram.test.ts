// RequestHistogram renders exactly what prom-client's own Histogram renders for the same requests.
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestHistogram } from '../../src/observability/request-histogram.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const NAME = 'http_request_duration_seconds';
const HELP = 'HTTP request latency by method, route pattern and status';

type Request = { method: string; route: string; status: number; seconds: number };

function both() {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new RequestHistogram({ name: NAME, help: HELP, buckets: BUCKETS, registers: [ours] });
  const reference = new Histogram({ name: NAME, help: HELP, buckets: BUCKETS, labelNames: ['method', 'route', 'status'], registers: [theirs] });
  const record = (r: Request) => {
    histogram.record(r.method, r.route, r.status, r.seconds);
    reference.observe({ method: r.method, route: r.route, status: String(r.status) }, r.seconds);
  };
  return { ours, theirs, histogram, reference, record };
}

const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'),
  route: fc.constantFrom('/internal/v1/routers', '/internal/v1/routers/:id', '/api/v1/auth/login', 'unmatched'),
  status: fc.constantFrom(200, 201, 204, 400, 401, 404, 500),
  // Exactly on a bound (the bucket includes it), between bounds, above them all (+Inf only), zero.
  seconds: fc.oneof(fc.constantFrom(...BUCKETS, 0, 7.5, 100), fc.double({ min: 0, max: 10, noNaN: true })),
});

describe('RequestHistogram', () => {
  it('renders the same text and JSON as a prom-client Histogram fed the same requests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(request, { maxLength: 60 }), async (requests) => {
        const { ours, theirs, record } = both();
        for (const r of requests) record(r);
        expect(await ours.metrics()).toBe(await theirs.metrics());
        expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
      }),
      { numRuns: 100 },
    );
  });

  it('counts through observe(labels, value) as well, and starts over on reset()', async () => {
    const { ours, theirs, histogram, reference, record } = both();
    record({ method: 'POST', route: '/internal/v1/routers', status: 201, seconds: 0.003 });
    histogram.observe({ method: 'GET', route: '/healthz', status: '200' }, 0.0004);
    reference.observe({ method: 'GET', route: '/healthz', status: '200' }, 0.0004);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('http_request_duration_seconds_bucket{le="0.001",method="GET",route="/healthz",status="200"} 1');
    histogram.reset();
    reference.reset();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).not.toContain('_count');
    expect(() => histogram.observe(0.1)).toThrow(/method, route and status/);
  });
});
