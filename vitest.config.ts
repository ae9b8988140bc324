import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// The suite runs on embedded PGlite; when TEST_DATABASE_URL is set, the database-backed tests run
// again on that PostgreSQL server (each test app creates and drops its own database there).
// The relay's engine-fed events run on both too (issue 12): the app they come from is built on either.
//
// Two groups, one after the other (`sequence.groupOrder`; vitest runs a group only once the one
// before it has finished):
//   0. the bulk (`pglite`, `postgres`): files in parallel on BULK_WORKERS forks; the suite mostly
//      waits on I/O, argon2's threads and mediasoup's worker processes, so more forks than cores pay.
//      Each fork runs file after file (`isolate: false`): the modules, the migrated PGlite snapshot
//      and the answer check's Ajv are loaded once per fork instead of once per file. What that takes
//      of the files (audited, issue 26): no vi.mock or vi.stubGlobal in the bulk (the one vi.mock, of
//      node:crypto, is in security.test.ts, a timing file); spies only on objects a test made; the
//      support modules' per-file state starts over in setup files (ports: setup-ports.ts, answers:
//      setup-answers.ts); a file that sets process.env does it with vi.stubEnv and puts it back with
//      vi.unstubAllEnvs (recording-upload).
//   1. the timing files (`timing`, `postgres-timing`): one file at a time (`fileParallelism: false`
//      makes maxWorkers 1) with nothing else running, because they measure time or make load. They
//      too run file after file in one process (`isolate: false`; none mocks a module or sets
//      process.env), except:
//   2. security.test.ts (`timing-alone`), alone in its own process: it mocks node:crypto.
// VITEST_MAX_WORKERS, if set, overrides every project's maxWorkers, the timing ones too: leave it unset.

/**
 * Forks for the bulk group, measured on 2 cores (issue 26): with `isolate: false` the bulk took 278 s
 * on 2 forks and 222 s on 3 (it took 395 s on 2 isolated forks).
 */
const BULK_WORKERS = 3;

/** The files that run alone, and why; `db: true` where the `postgres` project runs the file too. */
const TIMING: { glob: string; db?: true }[] = [
  // A user's login latency against a baseline while a password-change flood hashes (and the flood is CPU load).
  { glob: 'test/reliability/login-flood.test.ts' },
  // A known user's login median and max under the documented 1.2 s while a flood of new names hashes.
  { glob: 'test/reliability/login-flood-sources.test.ts' },
  // Two server processes and Redis: with Redis gone or stalled, no answer more than 200 ms over the baseline.
  { glob: 'test/reliability/shared-limits.test.ts' },
  // Slow clients dropped within the header/request/keep-alive timeouts (+1.5 s), /healthz under 1 s meanwhile.
  { glob: 'test/reliability/http-timeouts.test.ts' },
  // SIGTERM under load: exit within the 4 s shutdown deadline.
  { glob: 'test/reliability/shutdown.test.ts' },
  // Exit within the 4 s deadline with the output pipe gone, a write under 1 s.
  { glob: 'test/reliability/shutdown-output.test.ts' },
  // SIGTERM with a recording of paused producers: stopped and reported within the 4 s shutdown deadline; ffmpeg gone within 4 s of a SIGKILL.
  { glob: 'test/e2e/recording-lifecycle.test.ts' },
  // 32 recordings started and raced against DELETE and producer closes, each an ffmpeg: the heaviest
  // CPU load of the recordings, which slowed the bulk's time-bounded files beside it.
  { glob: 'test/e2e/recording-start.test.ts' },
  // A server process that must find its Redis at start (its probe has a deadline) and hold a mode for 4 s:
  // once started in the fallback beside the bulk's load, so it runs alone.
  { glob: 'test/reliability/redis-write-refusal.test.ts' },
  // /readyz flips within a bound over the measured round trip; packets per second while draining; exit timings.
  { glob: 'test/reliability/drain.test.ts' },
  // Its own PostgreSQL stopped and started under traffic: account requests must fail within a fail-fast bound.
  { glob: 'test/reliability/db-outage.test.ts' },
  // A first start's database time and peak memory (the migrated template of the embedded database).
  { glob: 'test/start/first-start.test.ts' },
  // "Same answer in the same time": known and unknown e-mails' medians within 40 ms.
  { glob: 'test/accounts/password-reset-timing.test.ts', db: true },
  // Two failed logins (argon2 each) and the refused ones must all fall inside a 2 s lock window.
  { glob: 'test/accounts/login-guard.test.ts', db: true },
  // A reset code must arrive within 3 s / 8 s behind a queue of notices on a slow SMTP server.
  { glob: 'test/accounts/mail-priority.test.ts', db: true },
  // A flood from 20 addresses (340 requests, hashing): ~26 s of its 30 s timeout with one fork on a loaded
  // machine, over it in each of 4 runs here beside 2-4 other forks (issue 26 measurements).
  { glob: 'test/accounts/password-reset-blocking.test.ts', db: true },
  // In-process argon2 queue: finishing order and a wait under 2 x 300 ms + 1.5 s depend on free CPU.
  { glob: 'test/accounts/hash-queue.test.ts', db: true },
  // Writers' waits while the event log is pruned, against the same writers alone (100 ms bound).
  { glob: 'test/db/event-retention.test.ts', db: true },
  // A webhook attempt must fail at its 800 ms deadline within 6 deadlines, in a child calling gc() all along.
  { glob: 'test/events/webhook-deadline.test.ts' },
  // The engine call's 200 ms deadline fires within 90-150 ms of it (timer precision; a second's run).
  { glob: 'test/relay/engine-call.test.ts' },
  // Real Chromium encoding 720p simulcast: packet and frame rates, and the heaviest CPU load in the suite
  // (browser-recording records the top layer with ffmpeg meanwhile).
  { glob: 'test/e2e/browser.test.ts' },
  { glob: 'test/e2e/browser-calls.test.ts' },
  { glob: 'test/e2e/browser-demo-relay.test.ts' },
  // The demo's WHIP page publishing a fake camera (640x480) and its WHEP page decoding it.
  { glob: 'test/e2e/browser-demo-whip.test.ts' },
  { glob: 'test/e2e/browser-recording.test.ts' },
  // Chromium publishing its fake camera and microphone through WHIP (once in 720p simulcast) and pages playing it by WHEP (encoding and decoding load, as the browser files).
  { glob: 'test/e2e/whip-browser.test.ts' },
  // A relay-only Chromium publishing by WHIP through a private coturn (encoding load, as above).
  { glob: 'test/e2e/whip-turn.test.ts' },
  // Issue 28: four Chromiums in a network namespace, each waiting (5 s, 45 s) on ICE through coturn over UDP, TCP and TLS.
  { glob: 'test/e2e/turn-relay.test.ts' },
];
// Read and left in the bulk: test/reliability/{media-concurrency,concurrency.db,refresh-race.db}.test.ts assert outcomes under any interleaving (no 5xx, one winner, modes), with
// bounds of 10 s (engine call, refresh grace, returns) that load does not approach; browser-passkeys,
// browser-totp and browser-oidc (a provider's pages on loopback) drive Chromium through the demo's forms,
// with no media and no time bound.

// The internal token compared in constant time: the ratio of two sub-millisecond medians, which load
// drift skews. It mocks node:crypto (a spy on timingSafeEqual), so it runs in a process of its own.
const SECURITY = 'test/reliability/security.test.ts';

const timingFileGlobs = TIMING.map((file) => file.glob);
const timingGlobs = [...timingFileGlobs, SECURITY];

const POSTGRES = [
  'test/accounts/*.test.ts',
  'test/db/**/*.test.ts',
  'test/app/**/*.test.ts',
  'test/reliability/**/*.db.test.ts',
  'test/relay/events/bridge.test.ts',
];

// `extends: true`: inline projects do not inherit the root options (timeouts, pool) otherwise.
const bulk = { sequence: { groupOrder: 0 }, maxWorkers: BULK_WORKERS, isolate: false };
const timing = { sequence: { groupOrder: 1 }, fileParallelism: false, isolate: false };

const projects: TestProjectInlineConfiguration[] = [
  { extends: true, test: { ...bulk, name: 'pglite', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...timingGlobs], env: { TEST_DB: 'pglite' } } },
  { extends: true, test: { ...timing, name: 'timing', include: timingFileGlobs, env: { TEST_DB: 'pglite' } } },
  { extends: true, test: { sequence: { groupOrder: 2 }, name: 'timing-alone', include: [SECURITY], env: { TEST_DB: 'pglite' } } },
];
if (process.env.TEST_DATABASE_URL) {
  projects.push(
    { extends: true, test: { ...bulk, name: 'postgres', include: POSTGRES, exclude: [...configDefaults.exclude, ...timingGlobs], env: { TEST_DB: 'postgres' } } },
    { extends: true, test: { ...timing, name: 'postgres-timing', include: TIMING.filter((file) => file.db).map((file) => file.glob), env: { TEST_DB: 'postgres' } } },
  );
}

export default defineConfig({
  test: {
    projects,
    // Real argon2, real PostgreSQL and real mediasoup workers on a 2-core machine under a parallel suite.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Every JSON answer of a test app validates against its documented response schema.
    // Each file's RTC ports start at the beginning of its worker's slice.
    setupFiles: ['test/support/setup-answers.ts', 'test/support/setup-ports.ts'],
  },
});
