// docker build cannot run on these machines (no Docker engine), so the Dockerfile and fly.toml are
// checked here for the points the deployment relies on.
import { readFileSync } from 'node:fs';
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
    // node itself, not `npm start`, so that tini's signal reaches the service
    expect(cmd?.args).toMatch(/^\["node"/);
    expect(cmd?.args).toContain('src/server.ts');
  });

  it('ships what the service needs at run time', () => {
    const copies = final.filter((i) => i.op === 'COPY').map((i) => i.args);
    for (const path of ['drizzle', 'src']) expect(copies.some((c) => c.startsWith(`${path} `))).toBe(true);
    expect(pkg.dependencies.tsx).toBeDefined();
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
    expect(Number.parseInt(fly.kill_timeout, 10)).toBeGreaterThanOrEqual(5);
    expect(fly.deploy.release_command).toBe('npm run db:migrate');
    expect(pkg.scripts['db:migrate']).toBeDefined();
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
