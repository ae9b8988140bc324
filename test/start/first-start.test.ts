// A first start on a new DATA_DIR copies the migrated template of the embedded database that
// `npm install` made (src/db/pglite-template.ts) instead of creating a cluster and migrating it:
// measured 12 s to ready and 889 MB peak before on a lightly loaded machine, most of it initdb.
// Its database is ready within 5 s and the process peaks under 400 MB. A timing file: it measures.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { makePgliteTemplate, pgliteTemplatePath } from '../../src/db/pglite-template.js';
import { startServer } from '../support/server-process.js';

/** The highest resident set size the process has had, in kB (Linux's VmHWM). */
async function peakRssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]);
}

it('a first start copies the migrated template: its database is ready within 5 s and the process peaks under 400 MB', { timeout: 300_000 }, async () => {
  // What npm install's postinstall made (made now when it did not run).
  expect(await makePgliteTemplate()).toBe(pgliteTemplatePath());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'first-start-'));
  try {
    const dataDir = path.join(dir, 'data');
    const server = await startServer({ DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'info' }, { timeoutMs: 120_000 });
    try {
      const peakKb = await peakRssKb(server.pid);
      const lines = server.logLines();
      expect(lines.filter((line) => line.msg === 'created the embedded database from the migrated template')).toEqual([
        expect.objectContaining({ template: pgliteTemplatePath(), dataDir: path.join(dataDir, 'pglite') }),
      ]);
      const ready = lines.find((line) => line.msg === 'database ready');
      expect(ready?.durationMs).toBeLessThan(5000);
      expect(peakKb).toBeGreaterThan(0);
      expect(peakKb).toBeLessThan(400 * 1024);
    } finally {
      await server.stop();
    }
    // A restart opens what the first start made; the template is copied only into a new folder.
    const again = await startServer({ DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'info' }, { timeoutMs: 120_000 });
    expect(again.logLines().filter((line) => /template/.test(line.msg))).toEqual([]);
    await again.stop();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
