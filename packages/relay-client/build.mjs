// Builds the relay client package from src/client: one self-contained ESM and one CommonJS bundle
// (its few dependencies, Hono's RPC client and eventsource-parser, bundled in: the package installs
// with no dependency); no type declarations yet. Run by the root's `npm run build` (postbuild).
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const entry = here('../../src/client/index.ts');
const dist = here('./dist');

await rm(dist, { recursive: true, force: true });
for (const [format, outfile] of [
  ['esm', `${dist}/index.js`],
  ['cjs', `${dist}/index.cjs`],
]) {
  await build({ entryPoints: [entry], outfile, bundle: true, format, platform: 'node', target: 'node20', external: ['node:*'], logLevel: 'warning', legalComments: 'inline' });
}
