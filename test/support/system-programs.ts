// The system programs some tests drive for real (never mocked). Each is looked for once; when it is
// missing, its tests are skipped with one line naming the Debian package to install, unless its
// REQUIRE_* variable is 1 (CI, .ci/run), where the missing program is a failure.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface SystemProgram {
  /** What the tests run. */
  command: string;
  /** An absolute path, or a name looked up on PATH. */
  path: string;
  /** The Debian package that installs it. */
  debianPackage: string;
  /** Set to 1 to make its absence a failure. */
  requireVariable: string;
}

export const REDIS_SERVER: SystemProgram = { command: 'redis-server', path: 'redis-server', debianPackage: 'redis-server', requireVariable: 'REQUIRE_REDIS' };
/** The server binaries test/reliability/support/postgres.ts runs (initdb, pg_ctl) for a private PostgreSQL 15. */
export const POSTGRES_SERVER: SystemProgram = { command: 'initdb', path: '/usr/lib/postgresql/15/bin/initdb', debianPackage: 'postgresql-15', requireVariable: 'REQUIRE_POSTGRES' };

/** Debian's Chromium for the real-browser tests (test/support/browser.ts checks it with REQUIRE_BROWSER). */
export const CHROMIUM_BROWSER: SystemProgram = { command: 'chromium', path: '/usr/bin/chromium', debianPackage: 'chromium', requireVariable: 'REQUIRE_BROWSER' };

/** Debian's coturn: its `turnserver` for the TURN tests (test/support/coturn.ts), issue 28. */
export const TURN_SERVER: SystemProgram = { command: 'turnserver', path: '/usr/bin/turnserver', debianPackage: 'coturn', requireVariable: 'REQUIRE_TURN' };
/** nftables: the firewall rule of the relayed-call test's network namespace (test/e2e/turn-relay.test.ts). */
export const NFTABLES: SystemProgram = { command: 'nft', path: '/usr/sbin/nft', debianPackage: 'nftables', requireVariable: 'REQUIRE_NFTABLES' };
/** Debian's ffmpeg and ffprobe: recordings (the relay runs it), the RTP ingest sender and the checks of the files. */
export const FFMPEG: SystemProgram = { command: 'ffmpeg', path: 'ffmpeg', debianPackage: 'ffmpeg', requireVariable: 'REQUIRE_FFMPEG' };

/** Every program, for the README's one `apt-get install` line and .ci/run's REQUIRE_* (test/ci/system-programs.test.ts). */
export const SYSTEM_PROGRAMS: readonly SystemProgram[] = [REDIS_SERVER, POSTGRES_SERVER, CHROMIUM_BROWSER, TURN_SERVER, NFTABLES, FFMPEG];

const found = new Map<SystemProgram, boolean>();

export function isInstalled(program: SystemProgram): boolean {
  let here = found.get(program);
  if (here === undefined) {
    if (program.path.startsWith('/')) here = existsSync(program.path);
    else {
      try {
        execFileSync('sh', ['-c', `command -v ${program.path}`], { stdio: 'ignore' });
        here = true;
      } catch {
        here = false;
      }
    }
    found.set(program, here);
  }
  return here;
}

/**
 * True when the tests needing `program` must be skipped: it is missing and not required (one line
 * then says which package to install). Throws when it is missing and required.
 * @example describe.skipIf(skipWithout(REDIS_SERVER))('… private redis-server', () => { … })
 */
export function skipWithout(program: SystemProgram): boolean {
  if (isInstalled(program)) return false;
  const install = `apt-get install -y ${program.debianPackage}`;
  if (process.env[program.requireVariable] === '1') throw new Error(`${program.requireVariable}=1 but ${program.command} is missing: ${install}`);
  console.warn(`${program.command} is missing, so the tests that run it are skipped: ${install} (${program.requireVariable}=1 makes this a failure)`);
  return true;
}
