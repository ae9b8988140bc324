// `npm install`'s postinstall (and `npm run db:template`): makes the migrated template of the
// embedded database (src/db/pglite-template.ts), so that a first `npm start` copies a cluster instead
// of creating and migrating one. Plain JavaScript, so that it runs wherever npm runs it; it does
// nothing where there is nothing to make a template for (a production install, the image's build
// stages, which copy package.json before the sources) and never fails the install: without a
// template a start creates its database as before, only slower.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const needed = ['src/db/pglite-template.ts', 'drizzle/meta/_journal.json', 'node_modules/tsx/package.json', 'node_modules/@electric-sql/pglite/package.json'];
if (process.env.NODE_ENV === 'production' || !needed.every((file) => existsSync(new URL(file, `file://${root}/`)))) process.exit(0);

const program = "const { makePgliteTemplate } = await import('./src/db/pglite-template.ts'); console.log(`embedded database template: ${await makePgliteTemplate()}`);";
const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) console.warn('could not make the embedded database template: the first start creates and migrates its database instead (slower)');
