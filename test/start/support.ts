// Runs a package.json script's command as npm would, but in a folder of the test's choosing (where
// .env and DATA_DIR are read), with the repository's node_modules and sources.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/server-process.js';

export interface ScriptProcess {
  url: string;
  /** Sends `signal` to the whole process group, as a terminal's Ctrl-C (SIGINT) does. */
  signalGroup(signal: NodeJS.Signals): void;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (or `signal`), then SIGKILL after `graceMs`; resolves once it is gone. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The command of `npm run <name>`, split on spaces, with `src/` made absolute. */
export function scriptCommand(name: string): string[] {
  const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const script = scripts[name];
  if (!script) throw new Error(`package.json has no script ${name}`);
  return script.split(' ').map((word) => (word.startsWith('src/') ? path.join(ROOT, word) : word));
}

/**
 * Starts `npm run <name>`'s command in `cwd` (which needs a node_modules link) with only PATH, HOME
 * and `env` in its environment, and waits for /healthz on `port`, or for the exit when `port` is
 * undefined.
 */
export async function runScript(name: string, options: { cwd: string; env?: Record<string, string>; port?: number; timeoutMs?: number }): Promise<ScriptProcess> {
  const [command, ...args] = scriptCommand(name);
  const bin = command === 'node' ? process.execPath : path.join(ROOT, 'node_modules', '.bin', command!);
  const child = spawn(bin, args, {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a terminal would start it (signals to the group reach the workers too).
    detached: true,
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-262_144);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // gone already
    }
  };
  process.once('exit', () => killGroup('SIGKILL'));
  const url = `http://127.0.0.1:${options.port}`;
  const result: ScriptProcess = {
    url,
    signalGroup: killGroup,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM', graceMs = 8000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => killGroup('SIGKILL'), graceMs);
      const done = await exited;
      clearTimeout(timer);
      // What the process left behind (mediasoup workers) goes with it.
      killGroup('SIGKILL');
      return done;
    },
  };
  if (options.port === undefined) return result;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return result;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await result.stop('SIGKILL');
  throw new Error(`npm run ${name} did not start:\n${output}`);
}

/** A temporary folder to run a script in: the repository's node_modules linked in, nothing else. */
export async function scriptFolder(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}
