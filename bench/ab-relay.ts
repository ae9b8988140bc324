// A/B of two relay trees under the relay-control load: `A=<dir> B=<dir> node --import tsx bench/ab-relay.ts`
// (each dir a checkout with node_modules, e.g. a `git worktree` of the commit to compare against).
// Both servers run at once; each round measures one window on each, the order flipping every round,
// so the machine's drift (10-15 % between windows minutes apart here) hits both alike. Prints the
// server's CPU per cycle (from /proc) for each, and the mean of the per-round ratios B/A: a change
// of 2-3 % shows in 10 rounds, where relay-control's cycles/s cannot tell it.
//   ROUNDS (10), WIN (window ms, 3000), SUB (1: one event stream reader on each server; 0: none;
//   A: on A only), BENV (extra env for B only, `NAME=value,NAME=value`).
import { BENCH_TOKEN, cpuMs, httpClient, info, runLoops, startServer, type HttpClient, type ServerProcess } from './lib.js';
import { httpCycle, subscribe } from './relay-control.js';

const trees = [process.env.A, process.env.B];
if (!trees[0] || !trees[1]) throw new Error('usage: A=<dir> B=<dir> node --import tsx bench/ab-relay.ts');
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const WIN = Number(process.env.WIN ?? 3000);
const SUB = process.env.SUB ?? '1';
const extraB = Object.fromEntries((process.env.BENV ?? '').split(',').filter(Boolean).map((kv) => kv.split('=') as [string, string]));

interface Server {
  proc: ServerProcess;
  client: HttpClient;
  workerPid: number;
  stopReader?: () => void;
}

async function start(cwd: string, env: Record<string, string>, reader: boolean): Promise<Server> {
  const proc = await startServer({ MEDIASOUP_WORKERS: '1', ...env }, { cwd });
  const client = httpClient(proc.url, { 'x-internal-token': BENCH_TOKEN });
  const workerPid = (await client.request('GET', '/internal/info')).body.workers[0].pid as number;
  const server: Server = { proc, client, workerPid };
  if (reader) server.stopReader = (await subscribe(proc.url)).stop;
  return server;
}

const servers = [await start(trees[0], {}, SUB !== '0'), await start(trees[1], extraB, SUB === '1')];
try {
  for (const s of servers) await runLoops(() => httpCycle(s.client), { concurrency: 8, maxCount: 1_000_000, maxMs: 4000 });
  const cpu: number[][] = [[], []];
  const workerCpu: number[][] = [[], []];
  const rate: number[][] = [[], []];
  for (let round = 0; round < ROUNDS; round++) {
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const s = servers[i]!;
      await runLoops(() => httpCycle(s.client), { concurrency: 8, maxCount: 1_000_000, maxMs: 1000 });
      const c0 = cpuMs(s.proc.pid);
      const w0 = cpuMs(s.workerPid);
      const run = await runLoops(() => httpCycle(s.client), { concurrency: 8, maxCount: 1_000_000, maxMs: WIN });
      cpu[i]!.push((cpuMs(s.proc.pid) - c0) / run.count);
      workerCpu[i]!.push((cpuMs(s.workerPid) - w0) / run.count);
      rate[i]!.push(run.perSecond);
    }
    info(`round ${round + 1}: A ${cpu[0]!.at(-1)!.toFixed(3)} B ${cpu[1]!.at(-1)!.toFixed(3)} ms CPU/cycle, B/A ${(cpu[1]!.at(-1)! / cpu[0]!.at(-1)!).toFixed(3)}`);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `server CPU per cycle A ${mean(cpu[0]!).toFixed(3)} ms, B ${mean(cpu[1]!).toFixed(3)} ms; B/A ${mean(cpu[1]!.map((b, i) => b / cpu[0]![i]!)).toFixed(3)} ` +
      `(worker A ${mean(workerCpu[0]!).toFixed(3)}, B ${mean(workerCpu[1]!).toFixed(3)} ms; cycles/s A ${mean(rate[0]!).toFixed(0)}, B ${mean(rate[1]!).toFixed(0)})`,
  );
} finally {
  for (const s of servers) {
    s.stopReader?.();
    s.client.close();
  }
  await Promise.all(servers.map((s) => s.proc.stop()));
}
