// The migrated PGlite cluster a new embedded database starts from. Creating a cluster (initdb inside
// WebAssembly) is most of a first start's time and memory (measured: 12 s and 889 MB against under
// 2 s of opening an existing one); `npm install` makes the template once (scripts/pglite-template.mjs)
// into node_modules/.cache, and a start whose database folder is new copies it instead.
// The template's name is a digest of the installed PGlite and of every committed migration file:
// after a new migration or a PGlite upgrade no template matches (until the next `npm install`), and
// a new database is created and migrated as before. A stale template is never used.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.js';
import { openDatabase } from './client.js';
import { migrateDatabase, migrationsFolder } from './migrate.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where templates are kept: the install's own cache folder (a new install, a new template). */
export const TEMPLATE_CACHE = path.join(ROOT, 'node_modules', '.cache', 'chat-backend');

/** The folder the template for the installed PGlite and the committed migrations has, or would have. */
export function pgliteTemplatePath(): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(path.join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json')));
  for (const folder of [migrationsFolder, path.join(migrationsFolder, 'meta')]) {
    for (const name of readdirSync(folder).sort()) {
      if (!name.endsWith('.sql') && !name.endsWith('.json')) continue;
      hash.update(name).update(readFileSync(path.join(folder, name)));
    }
  }
  return path.join(TEMPLATE_CACHE, `pglite-${hash.digest('hex').slice(0, 16)}`);
}

/**
 * Makes the template when there is none for these migrations (a new cluster, migrated, closed),
 * written under a temporary name and renamed into place whole; removes templates of other
 * migrations. Returns its folder.
 * @example await makePgliteTemplate()
 */
export async function makePgliteTemplate(): Promise<string> {
  const template = pgliteTemplatePath();
  if (existsSync(template)) return template;
  await mkdir(TEMPLATE_CACHE, { recursive: true });
  const partial = `${template}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  const database = await openDatabase({ kind: 'pglite', dataDir: partial });
  try {
    await migrateDatabase(database);
  } finally {
    await database.close();
  }
  try {
    await rename(partial, template);
  } catch (error) {
    // Another install made it first.
    await rm(partial, { recursive: true, force: true });
    if (!existsSync(template)) throw error;
  }
  for (const name of await readdir(TEMPLATE_CACHE)) {
    if (name.startsWith('pglite-') && path.join(TEMPLATE_CACHE, name) !== template) await rm(path.join(TEMPLATE_CACHE, name), { recursive: true, force: true });
  }
  return template;
}

/**
 * Before the embedded database at `dataDir` is opened: when the folder holds no cluster yet and a
 * template matches the committed migrations, copies it there (through a temporary folder renamed
 * into place, so an interrupted copy is never taken for a database). Returns whether it did.
 */
export async function seedFromTemplate(dataDir: string, logger: Logger): Promise<boolean> {
  if (existsSync(path.join(dataDir, 'PG_VERSION'))) return false;
  const template = pgliteTemplatePath();
  if (!existsSync(template)) {
    logger.info({ template }, 'no migrated template of the embedded database for these migrations (npm install makes one): creating the database, which takes several seconds');
    return false;
  }
  if (existsSync(dataDir) && (await readdir(dataDir)).length > 0) return false;
  const partial = `${dataDir}.seeding`;
  await rm(partial, { recursive: true, force: true });
  await cp(template, partial, { recursive: true });
  await rm(dataDir, { recursive: true, force: true });
  await rename(partial, dataDir);
  logger.info({ template, dataDir }, 'created the embedded database from the migrated template');
  return true;
}
