// Builds the relay client package from src/client: one self-contained ESM and one CommonJS bundle
// (its few dependencies, Hono's RPC client and eventsource-parser, bundled in: the package installs
// with no dependency), and one declaration file for each (dist/index.d.ts, and dist/index.d.cts that
// `require` resolves to). Run by the root's `npm run build` (postbuild).
//
// The declarations are bundled by dts-bundle-generator from src/client/index.ts: it type-checks with
// the project's own TypeScript and tsconfig straight from the source (no intermediate tsc emit) and
// keeps any type of a library as an `import` of it, never silently inlined, so the check below can
// refuse a declaration file that would need hono, zod or anything else installed. The client's public
// types are the wire types generated into src/client/wire.gen.ts (which imports nothing), so the bundle
// holds only them.
import { copyFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
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

// dts-bundle-generator is CommonJS.
const { generateDtsBundle } = createRequire(import.meta.url)('dts-bundle-generator');
const [declarations] = generateDtsBundle(
  [{ filePath: entry, output: { noBanner: true, exportReferencedTypes: false }, libraries: { allowedTypesLibraries: ['node'] } }],
  { preferredConfigPath: here('../../tsconfig.json') },
);
const imports = declarations.split('\n').filter((line) => /^\s*import\b|\bfrom\s+['"]|import\(['"]/.test(line));
if (imports.length > 0) {
  throw new Error(`dist/index.d.ts would import other packages' types (the client's public types must be the wire types of src/client/wire.gen.ts and types.ts):\n${imports.join('\n')}`);
}
await writeFile(`${dist}/index.d.ts`, declarations);
// The same declarations for `require` (a .d.ts next to a "type": "module" package is ESM to TypeScript).
await copyFile(`${dist}/index.d.ts`, `${dist}/index.d.cts`);
