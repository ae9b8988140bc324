// The RTC port plan of the tests and benchmarks: which WebRtcServer ports each kind of server gets.
//
// All of it lies below Linux's ephemeral range (32768-60999 by default). A port inside that range
// can be held at any moment by an outgoing connection of the suite (it opens hundreds, to PostgreSQL
// and to the child servers), and a WebRtcServer asked to listen there fails with EADDRINUSE: the
// flaky "address already in use" of the start-up and restart tests. Services of the machine itself
// listen at 1883, 3306, 4222, 5432, 5672, 6379 and 25672, so the plan stays within 20000-22199.
//
// TEST_RTC_PORT_SHIFT moves the whole plan (a multiple of 2200, from -8800 to 8800: 11200-30999 in
// all, below the ephemeral range and above the machine's services), so that several checkouts can run
// their suites side by side on one machine without taking each other's ports.

const SHIFT = (() => {
  const shift = Number(process.env.TEST_RTC_PORT_SHIFT ?? 0);
  if (!Number.isInteger(shift) || shift % 2_200 !== 0 || shift < -8_800 || shift > 8_800) throw new Error('TEST_RTC_PORT_SHIFT must be a multiple of 2200 from -8800 to 8800');
  return shift;
})();

/** Apps built inside a vitest worker (test/support/app.ts): one 40-port slice per worker. */
const IN_PROCESS = { base: 20_000 + SHIFT, perPool: 40, pools: 25 };
/** Real servers started as child processes by the tests: 21000-21899, 100 ports per worker. */
const CHILD_SERVERS = { base: 21_000 + SHIFT, perPool: 100, pools: 9, perServer: 10 };
/** Kept for `npm run soak`, which may run beside the tests. */
export const SOAK_RTC_PORTS = { min: 21_900 + SHIFT, max: 21_919 + SHIFT } as const;
/** The benchmarks: 22000-22179 in slices of 20, then one port for each baseline. */
const BENCH = { base: 22_000 + SHIFT, slice: 20, slices: 9 };
export const BASELINE_RTC_PORTS = { bare: 22_199 + SHIFT, inProcess: 22_198 + SHIFT } as const;

export interface PortRange {
  min: number;
  max: number;
}

/** The vitest worker this file runs in (1-based; 1 outside vitest). */
function poolIndex(pools: number): number {
  return (Math.max(1, Number(process.env.VITEST_POOL_ID ?? 1)) - 1) % pools;
}

let nextInProcess = 0;
/** `count` consecutive ports of this vitest worker's slice, wrapping round within it. */
export function inProcessRtcPorts(count = 1): PortRange {
  if (count > IN_PROCESS.perPool) throw new Error(`a test app gets at most ${IN_PROCESS.perPool} RTC ports`);
  if (nextInProcess + count > IN_PROCESS.perPool) nextInProcess = 0;
  const min = IN_PROCESS.base + poolIndex(IN_PROCESS.pools) * IN_PROCESS.perPool + nextInProcess;
  nextInProcess += count;
  return { min, max: min + count - 1 };
}

let nextChildServer = 0;
/** Ports for one child server of this vitest worker: ten of its slice, in turn. */
export function childServerRtcPorts(count: number): PortRange {
  if (count > CHILD_SERVERS.perServer) throw new Error(`a child server gets at most ${CHILD_SERVERS.perServer} RTC ports`);
  const slot = nextChildServer++ % (CHILD_SERVERS.perPool / CHILD_SERVERS.perServer);
  const min = CHILD_SERVERS.base + poolIndex(CHILD_SERVERS.pools) * CHILD_SERVERS.perPool + slot * CHILD_SERVERS.perServer;
  return { min, max: min + count - 1 };
}

/**
 * Starts this worker's turns over, as a new process would: test/support/setup-ports.ts calls it before
 * each test file. The bulk runs its files one after another in a worker that stays (`isolate: false`),
 * where the turns would otherwise go on from where the previous file left them and a file's later apps
 * would wrap round onto ports its earlier ones still hold.
 */
export function startPortTurnsOver(): void {
  nextInProcess = 0;
  nextChildServer = 0;
}

let nextBench = 0;
/** A 20-port slice for one benchmark server, in turn; `slices` consecutive ones for a server that needs more (bench/recording.ts). */
export function benchRtcPorts(slices = 1): PortRange {
  if (slices < 1 || slices > BENCH.slices) throw new Error(`a benchmark server gets 1 to ${BENCH.slices} slices`);
  if ((nextBench % BENCH.slices) + slices > BENCH.slices) nextBench += BENCH.slices - (nextBench % BENCH.slices);
  const min = BENCH.base + (nextBench % BENCH.slices) * BENCH.slice;
  nextBench += slices;
  return { min, max: min + slices * BENCH.slice - 1 };
}
