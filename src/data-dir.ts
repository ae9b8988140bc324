// DATA_DIR's layout: `secrets/` (the generated development secrets) and `pglite/` (the embedded
// database), each private to the service's user. Apart, so that a copy or backup of the database
// never carries the key that opens the TOTP secrets and signing keys sealed inside it. A DATA_DIR of
// the earlier layout (PGlite's files and the secret files side by side in DATA_DIR itself) is moved
// into this one at start, once; nothing is copied or lost, only renamed.
import { chmod, lstat, mkdir, readdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { DATA_DIR_FOLDERS } from './config/server.js';
import type { Logger } from './logger.js';
import { GENERATED_AUTH_KEY_FILE } from './secrets/auth-key.js';
import { GENERATED_INTERNAL_TOKEN_FILE } from './secrets/internal-token.js';

/**
 * What PostgreSQL (and so PGlite) keeps at the top of its data directory. Only these move: anything
 * else a DATA_DIR holds (the default RECORDINGS_DIR is `./.data/recordings`) stays where it is.
 */
const CLUSTER_ENTRY = /^(PG_VERSION|base|global|pg_[a-z_]+|pg_(hba|ident)\.conf|postgresql(\.auto)?\.conf|postmaster\.(opts|pid))$/;

/** The folder the earlier layout's cluster is moved into before it takes the database folder's name. */
const MOVING_SUFFIX = '.moving';

/**
 * The umask of the service's whole life: what it creates (the database's folders, generated secrets,
 * recordings and their ffmpeg children's files) is its user's alone. PGlite chmods the files it makes
 * to 0666 or 0644 whatever the umask; its folder (0700) keeps them private while it runs, and the
 * group and other bits come off at every start (`prepareDataDir`) and every close of the database
 * (src/db/client.ts), so the folder at rest, and any copy of it, is private too.
 */
export const PRIVATE_UMASK = 0o077;

export interface DataDirLayout {
  /** DATA_DIR itself. */
  root: string;
  secrets: string;
  pglite: string;
}

export function dataDirLayout(dataDir: string): DataDirLayout {
  const root = path.resolve(dataDir);
  return { root, secrets: path.join(root, DATA_DIR_FOLDERS.secrets), pglite: path.join(root, DATA_DIR_FOLDERS.pglite) };
}

/**
 * Brings DATA_DIR to its layout before anything reads it: moves an earlier layout's cluster into
 * `pglite/` and its secret files into `secrets/`, and makes both folders and everything in them
 * private (folders 0700, files 0600). Does nothing when DATA_DIR does not exist yet (the secrets and
 * the database make their folders, 0700, when first needed). Throws, naming DATA_DIR, when the
 * folder holds both layouts' clusters: which one is the real database is for a person to decide.
 * @example await prepareDataDir(config.dataDir, logger)
 */
export async function prepareDataDir(dataDir: string, logger: Logger): Promise<void> {
  const layout = dataDirLayout(dataDir);
  let entries: string[];
  try {
    entries = await readdir(layout.root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moving = `${layout.pglite}${MOVING_SUFFIX}`;
  const cluster = entries.filter((name) => CLUSTER_ENTRY.test(name));
  if (cluster.length > 0 || entries.includes(path.basename(moving))) {
    if (entries.includes(DATA_DIR_FOLDERS.pglite)) {
      throw new Error(`DATA_DIR ${layout.root} holds two databases, one in ${DATA_DIR_FOLDERS.pglite}/ and one beside it (the earlier layout): keep one and move the other away`);
    }
    await mkdir(moving, { recursive: true, mode: 0o700 });
    // PG_VERSION last: a start interrupted half way finds the rest still to move.
    for (const name of cluster.sort((a, b) => Number(a === 'PG_VERSION') - Number(b === 'PG_VERSION'))) {
      await rename(path.join(layout.root, name), path.join(moving, name));
    }
    await rename(moving, layout.pglite);
    logger.warn({ from: layout.root, to: layout.pglite }, `moved the embedded database into ${layout.pglite} (DATA_DIR keeps the database and the generated secrets in separate folders)`);
  }
  for (const name of [GENERATED_AUTH_KEY_FILE, GENERATED_INTERNAL_TOKEN_FILE]) {
    if (!entries.includes(name)) continue;
    const to = path.join(layout.secrets, name);
    await mkdir(layout.secrets, { recursive: true, mode: 0o700 });
    if (await exists(to)) throw new Error(`DATA_DIR ${layout.root} holds ${name} twice, beside ${DATA_DIR_FOLDERS.secrets}/ and in it: keep one`);
    await rename(path.join(layout.root, name), to);
    logger.warn({ file: to }, `moved the generated ${name} into ${layout.secrets}`);
  }
  for (const folder of [layout.secrets, layout.pglite]) if (await exists(folder)) await makePrivate(folder);
}

/** Takes the group and other bits off `folder` and everything under it (symbolic links are left alone). */
export async function makePrivate(folder: string): Promise<void> {
  const info = await lstat(folder);
  if (info.isSymbolicLink()) return;
  if ((info.mode & 0o077) !== 0) await chmod(folder, info.mode & 0o700);
  if (!info.isDirectory()) return;
  for (const entry of await readdir(folder)) await makePrivate(path.join(folder, entry));
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
