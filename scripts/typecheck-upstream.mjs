#!/usr/bin/env node
// Type-checks the project against upstream mediasoup's release (not the pinned fork the service runs):
// installs `mediasoup@<version>` without its install script (no worker build) into a folder of the OS
// temp dir, cached by version, and runs tsc with a generated tsconfig that extends the project's and
// maps 'mediasoup' to that copy's typings. `npm run typecheck:upstream`; MEDIASOUP_UPSTREAM_VERSION overrides.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const version = process.env.MEDIASOUP_UPSTREAM_VERSION ?? '3.27.1';
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = path.join(tmpdir(), `chat-backend-upstream-mediasoup-${version}`);
const typings = path.join(cache, 'node_modules', 'mediasoup', 'node', 'lib', 'index.d.ts');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

if (!existsSync(typings)) {
  console.log(`installing mediasoup@${version} (--ignore-scripts) into ${cache}`);
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  writeFileSync(path.join(cache, 'package.json'), JSON.stringify({ name: 'upstream-mediasoup-typings', private: true }));
  execFileSync(npm, ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', `mediasoup@${version}`], { cwd: cache, stdio: 'inherit' });
  if (!existsSync(typings)) throw new Error(`mediasoup@${version} has no typings at ${typings}`);
}

// With moduleResolution NodeNext, only a `paths` entry naming the .d.ts itself takes effect (a
// mapping to the package folder does not); typeRoots keeps @types/node the project's own.
const configs = [
  ['tsconfig.json', 'project'],
  [path.join('examples', 'browser-demo', 'tsconfig.json'), 'browser demo'],
];
let failed = false;
for (const [config, name] of configs) {
  const generated = path.join(cache, `tsconfig.${name.replace(/\W+/g, '-')}.json`);
  writeFileSync(
    generated,
    JSON.stringify(
      {
        extends: path.join(repo, config),
        compilerOptions: {
          noEmit: true,
          baseUrl: repo,
          paths: { mediasoup: [typings] },
          typeRoots: [path.join(repo, 'node_modules', '@types')],
        },
      },
      null,
      2,
    ),
  );
  console.log(`tsc: ${name} against mediasoup@${version}`);
  try {
    execFileSync(process.execPath, [path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', generated], { cwd: repo, stdio: 'inherit' });
  } catch {
    failed = true;
  }
}
if (failed) {
  console.error(`type-check against upstream mediasoup@${version} failed`);
  process.exit(1);
}
console.log(`type-check against upstream mediasoup@${version}: ok`);
