// Fast text checks of the Dockerfile and fly.toml for the points the deployment relies on. The image
// itself is built and run, with podman, by `npm run test:image` (test/image/run.ts), in CI too.
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
const fly = parse(readFileSync(new URL('fly.toml', root), 'utf8')) as Record<string, any>;
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));

/** Dockerfile instructions with continuation lines joined, comments dropped. */
function instructions(text: string): Array<{ op: string; args: string }> {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [op = '', ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

describe('Dockerfile', () => {
  const all = instructions(dockerfile);
  const stages: Array<Array<{ op: string; args: string }>> = [];
  for (const ins of all) {
    if (ins.op === 'FROM') stages.push([]);
    stages.at(-1)?.push(ins);
  }
  const final = stages.at(-1) ?? [];
  const nodeVersion = /ARG NODE_VERSION=(\d+)/.exec(dockerfile)?.[1];

  it('is multi-stage on a Node 22 LTS slim base', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(nodeVersion).toBe('22');
    for (const stage of stages) expect(stage[0]?.args).toMatch(/^node:\$\{NODE_VERSION\}-slim\b/);
  });

  it('installs only production dependencies in the final stage, with the lockfile', () => {
    const runs = final.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /\bnpm ci\b.*--omit=dev/.test(r))).toBe(true);
    expect(final.some((i) => i.op === 'COPY' && i.args.includes('package-lock.json'))).toBe(true);
  });

  it('has no build toolchain in the final image', () => {
    const runs = final.filter((i) => i.op === 'RUN').map((i) => i.args).join(' ');
    for (const tool of ['build-essential', 'g++', 'gcc', 'make', 'python3', 'node-gyp']) {
      expect(runs).not.toMatch(new RegExp(`(^|\\s)${tool.replace('+', '\\+')}(\\s|$)`));
    }
  });

  it('runs as a non-root user with an init that forwards signals', () => {
    const user = final.filter((i) => i.op === 'USER').at(-1);
    expect(user?.args).toBeDefined();
    expect(user?.args).not.toMatch(/^(root|0)(:|$)/);
    const entrypoint = final.filter((i) => i.op === 'ENTRYPOINT').at(-1);
    expect(entrypoint?.args).toMatch(/tini/);
    const cmd = final.filter((i) => i.op === 'CMD').at(-1);
    // node itself, not `npm start`, so that tini's signal reaches the service; compiled JavaScript, not tsx
    expect(cmd?.args).toBe('["node", "dist/server.js"]');
  });

  it('ships the compiled service and its migrations, and no sources, tests or TypeScript tooling', () => {
    const copies = final.filter((i) => i.op === 'COPY').map((i) => i.args);
    expect(copies).toContain('drizzle ./drizzle');
    expect(copies).toContain('--from=build /app/dist ./dist');
    for (const path of ['src', 'test', 'bench', 'examples', '.']) expect(copies.some((c) => c.startsWith(`${path} `))).toBe(false);
    // The build stage compiles with tsconfig.build.json: src/ to dist/, file for file.
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json');
    const build = JSON.parse(readFileSync(new URL('tsconfig.build.json', root), 'utf8').replace(/^\s*\/\/.*$/gm, ''));
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist', noEmit: false });
    expect(build.include).toEqual(['src']);
    // Nothing of the run time is a dev dependency, and the TypeScript tooling is one.
    for (const name of ['tsx', 'typescript', 'vitest']) expect(pkg.dependencies[name], name).toBeUndefined();
  });
});

describe('fly.toml', () => {
  it('serves HTTP on the app port with a /readyz check', () => {
    expect(fly.http_service.internal_port).toBe(Number(fly.env.PORT));
    const checks = fly.http_service.checks as Array<Record<string, unknown>>;
    expect(checks.some((c) => c.path === '/readyz')).toBe(true);
  });

  it('exposes UDP and TCP 40000-40199 with external = internal ports', () => {
    const services = fly.services as Array<Record<string, any>>;
    for (const protocol of ['udp', 'tcp']) {
      const service = services.find((s) => s.protocol === protocol);
      expect(service, protocol).toBeDefined();
      const ports = service!.ports as Array<Record<string, number>>;
      expect(ports).toContainEqual(expect.objectContaining({ start_port: 40000, end_port: 40199 }));
    }
    expect(fly.env.RTC_MIN_PORT).toBe('40000');
    expect(fly.env.RTC_MAX_PORT).toBe('40199');
  });

  it('matches the graceful shutdown and runs migrations on release', () => {
    expect(fly.kill_signal).toBe('SIGTERM');
    // The drain, then the 4 s shutdown, must end before Fly's SIGKILL.
    expect(Number.parseInt(fly.kill_timeout, 10)).toBeGreaterThanOrEqual(Number(fly.env.DRAIN_TIMEOUT_S) + 5);
    // The compiled migration CLI (the image has no tsx): dist/db/migrate-cli.js is built from src/db/migrate-cli.ts.
    expect(fly.deploy.release_command).toBe('node dist/db/migrate-cli.js');
    expect(existsSync(new URL('src/db/migrate-cli.ts', root))).toBe(true);
  });

  it('binds UDP to fly-global-services, keeps workers = vCPUs and the internal API private', () => {
    expect(fly.env.MEDIASOUP_UDP_LISTEN_IP).toBe('fly-global-services');
    expect(fly.env.MEDIASOUP_LISTEN_IP).toBe('0.0.0.0');
    const vm = (fly.vm as Array<Record<string, unknown>>)[0]!;
    expect(vm.cpu_kind).toBe('performance');
    expect(Number(fly.env.MEDIASOUP_WORKERS)).toBe(vm.cpus);
    expect(fly.env.INTERNAL_HOST).toBe('fly-local-6pn');
    expect(fly.env.NODE_ENV).toBe('production');
  });
});
