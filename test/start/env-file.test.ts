// Issue 27 #2: .env.example lists every variable of src/config with its default (generated, so it
// cannot drift), and `npm start` reads .env when present, the environment winning over it.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config/index.js';
import { renderEnvExample } from '../../src/config/env-example.js';
import { freePort, ROOT, SERVER_AUTH_KEY_SECRET } from '../support/server-process.js';
import { copyMigratedCluster } from '../support/pglite-snapshot.js';
import { childServerRtcPorts } from '../support/ports.js';
import { runScript } from './support.js';

const example = readFileSync(path.join(ROOT, '.env.example'), 'utf8');

describe('.env.example', () => {
  it('is what `npm run env:example` generates from src/config', () => {
    expect(example, 'run `npm run env:example`').toBe(renderEnvExample());
  });

  it('names every variable once, each with its default or what stands for it', () => {
    const names = [...example.matchAll(/^# ([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    expect(names.filter((n, i) => names.indexOf(n) !== i && n !== 'DATABASE_URL' && n !== 'REDIS_URL')).toEqual([]);
    expect(new Set(names)).toEqual(new Set(CONFIG_VARIABLES.map((v) => v.name)));
  });

  it('holds the defaults: uncommenting every literal value changes nothing', () => {
    const env: Record<string, string> = {};
    for (const [, name, value] of example.matchAll(/^# ([A-Z][A-Z0-9_]*)=(\S+)$/gm)) env[name!] = value!;
    expect(Object.keys(env).length).toBeGreaterThan(40);
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });
});

describe('npm start and .env', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it('reads .env from the folder it runs in; a variable set in the environment wins', { timeout: 90_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dotenv-start-'));
    dirs.push(dir);
    await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    // The embedded database of ./.data (the default DATA_DIR), a copy of the migrated cluster: a new one would cost seconds of initdb.
    await copyMigratedCluster(path.join(dir, '.data'));
    const [filePort, envPort] = [await freePort(), await freePort()];
    const rtc = childServerRtcPorts(1);
    const token = 'token-from-dot-env-0123456789abcdefghijklmnop';
    await writeFile(
      path.join(dir, '.env'),
      [
        `PORT=${filePort}`,
        'HOST=127.0.0.1',
        `INTERNAL_TOKEN=${token}`,
        `AUTH_KEY_SECRET=${SERVER_AUTH_KEY_SECRET}`,
        'MEDIASOUP_WORKERS=1',
        `RTC_MIN_PORT=${rtc.min}`,
        `RTC_MAX_PORT=${rtc.max}`,
        'MEDIASOUP_LISTEN_IP=127.0.0.1',
        'LOG_LEVEL=warn',
      ].join('\n'),
    );
    const server = await runScript('start', { cwd: dir, env: { PORT: String(envPort) }, port: envPort });
    try {
      const info = await fetch(`${server.url}/internal/info`, { headers: { 'X-Internal-Token': token } });
      expect(info.status).toBe(200);
      await expect(fetch(`http://127.0.0.1:${filePort}/healthz`)).rejects.toThrow();
    } finally {
      await server.stop();
    }
  });
});
