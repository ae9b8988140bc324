// A private PostgreSQL 15 instance for fault tests: initdb in a temp dir, on a spare port of 127.0.0.1,
// stopped and started at will. Tests run as root and initdb refuses root, so the tools run as `postgres`.
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../support/server-process.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';

export interface OwnPostgres {
  port: number;
  dir: string;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** pg_ctl stop; `fast` ends sessions (as an operator's restart does), `immediate` is a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** The server's own log (log_min_messages debug1: it names each client that left without saying goodbye). */
  log(): string;
  /** Stops the server if it runs and removes the temp dir. Never throws. */
  destroy(): Promise<void>;
}

/** The uid/gid of the `postgres` OS user. */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

function asPostgres(tool: string, args: string[], timeoutMs = 30_000) {
  // Already the postgres user (a non-root CI): run the tool directly.
  if (userInfo().username === 'postgres') return run(path.join(BIN, tool), args, { timeout: timeoutMs });
  return run('runuser', ['-u', 'postgres', '--', path.join(BIN, tool), ...args], { timeout: timeoutMs });
}

const live = new Set<OwnPostgres>();
process.once('exit', () => {
  // Last resort if a worker dies mid-test: leave no server and no directory behind.
  for (const pg of live) {
    try {
      process.kill(Number(readFileSync(path.join(pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGQUIT');
    } catch {
      // not running
    }
    rmSync(pg.dir, { recursive: true, force: true });
  }
});

/** initdb + start; the caller must `destroy()` it (afterAll). */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'reliability-pg-'));
  const { uid, gid } = await postgresUser();
  chownSync(dir, uid, gid);
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const port = await freePort();
  const options = [
    `-c port=${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c log_min_messages=debug1',
    '-c log_line_prefix=%m\\ [%p]\\ %a\\ ',
  ].join(' ');
  let running = false;
  const pg: OwnPostgres = {
    port,
    dir,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await asPostgres('pg_ctl', ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '20', 'start']);
      running = true;
    },
    async stop(mode = 'fast') {
      await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '20', 'stop']);
      running = false;
    },
    log() {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    },
    async destroy() {
      try {
        if (running) await pg.stop('immediate');
      } catch {
        // already down
      }
      live.delete(pg);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(pg);
  try {
    await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], 60_000);
    await pg.start();
  } catch (error) {
    await pg.destroy();
    throw error;
  }
  return pg;
}
