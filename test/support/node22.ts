// Where a Node 22 binary is for the tests that run a child process on Node 22 too: NODE22_BIN, else the
// one scripts/fetch-node22.sh caches. Missing, the Node 22 case is skipped with how to get it, unless
// REQUIRE_NODE22=1 (CI), where it fails.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

const FETCH = 'bash scripts/fetch-node22.sh (or set NODE22_BIN)';

/** The Node 22 binary, or undefined when there is none (NODE22_BIN, then the cache of scripts/fetch-node22.sh). */
export function node22Binary(): string | undefined {
  const given = process.env.NODE22_BIN;
  if (given) return given;
  const cached = path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'chat-backend', 'node22', 'bin', 'node');
  return existsSync(cached) ? cached : undefined;
}

/** The Node 22 binary; without one, skips the calling test (or fails it under REQUIRE_NODE22=1). */
export function requireNode22(ctx: { skip(note: string): void }): string {
  const bin = node22Binary();
  if (bin && existsSync(bin)) return bin;
  if (process.env.REQUIRE_NODE22 === '1') throw new Error(`REQUIRE_NODE22=1 but there is no Node 22 binary${bin ? ` at ${bin}` : ''}: ${FETCH}`);
  const note = `no Node 22 binary, so the Node 22 case is skipped: ${FETCH} (REQUIRE_NODE22=1 makes this a failure)`;
  console.warn(note);
  ctx.skip(note);
  return '';
}
