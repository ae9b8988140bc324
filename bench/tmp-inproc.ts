// In-process CPU per relay cycle through app.request (no sockets): our JS + mediasoup's JS.
import { buildTestApp } from '../test/support/app.js';
import { fakeDtlsParameters, opusProducerRtpParameters, runLoops } from './lib.js';
const t = await buildTestApp({ LOG_LEVEL: 'warn', MEDIASOUP_WORKERS: '1' });
const H = { 'X-Internal-Token': t.internalToken, 'Content-Type': 'application/json' };
const req = async (method: string, path: string, body?: unknown) => {
  const res = await t.app.request(path, { method, headers: H, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};
let ssrc = 1;
async function cycle() {
  const r = await req('POST', '/internal/v1/routers', {});
  const routerId = r.body.id;
  const [s, v] = await Promise.all([req('POST', '/internal/v1/transports', { routerId, direction: 'send' }), req('POST', '/internal/v1/transports', { routerId, direction: 'recv' })]);
  await Promise.all([req('POST', `/internal/v1/transports/${s.body.id}/connect`, { dtlsParameters: fakeDtlsParameters }), req('POST', `/internal/v1/transports/${v.body.id}/connect`, { dtlsParameters: fakeDtlsParameters })]);
  const p = await req('POST', '/internal/v1/producers', { transportId: s.body.id, kind: 'audio', rtpParameters: opusProducerRtpParameters(ssrc++) });
  const c = await req('POST', '/internal/v1/consumers', { transportId: v.body.id, producerId: p.body.id, rtpCapabilities: r.body.rtpCapabilities });
  if (c.status !== 201) throw new Error(JSON.stringify(c.body));
  await req('POST', `/internal/v1/consumers/${c.body.id}/resume`);
  await req('DELETE', `/internal/v1/consumers/${c.body.id}`);
  await req('DELETE', `/internal/v1/producers/${p.body.id}`);
  await req('DELETE', `/internal/v1/routers/${routerId}`);
}
await runLoops(cycle, { concurrency: 8, maxCount: 1e9, maxMs: 4000 });
const results: number[] = [];
for (let i = 0; i < 5; i++) {
  const c0 = process.cpuUsage();
  const run = await runLoops(cycle, { concurrency: 8, maxCount: 1e9, maxMs: 3000 });
  const c = process.cpuUsage(c0);
  results.push((c.user + c.system) / run.count);
}
results.sort((a, b) => a - b);
console.log(`INPROC µs/cycle: ${results.map((x) => x.toFixed(0)).join(' ')} median ${results[2]!.toFixed(0)}`);
await t.close();
process.exit(0);
