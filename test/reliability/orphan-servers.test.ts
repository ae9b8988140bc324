// A child server started by a test process that is killed (a vitest fork ended at a timeout, no exit
// handler run) must not live on holding its ports: it kills itself once its parent is gone.
import { spawn } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from '../support/server-process.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
let serverPid: number | undefined;
afterAll(() => {
  if (serverPid !== undefined && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
});

it('a child server outlives its killed test process by at most a few seconds', { timeout: 90_000 }, async () => {
  const script = `import { startServer } from './test/support/server-process.ts';
const server = await startServer({}, { timeoutMs: 60_000 });
console.log('PID ' + server.pid);
setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    let out = '';
    serverPid = await new Promise<number>((resolve, reject) => {
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /PID (\d+)/.exec(out);
        if (match) resolve(Number(match[1]));
      });
      parent.once('exit', () => reject(new Error(`the parent exited before its server was ready: ${out}`)));
    });
    expect(alive(serverPid)).toBe(true);
  } finally {
    parent.kill('SIGKILL');
  }
  const deadline = Date.now() + 10_000;
  while (alive(serverPid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(alive(serverPid), 'the orphaned server is gone').toBe(false);
});
