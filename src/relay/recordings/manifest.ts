// A recording's manifest: `<id>.json` beside its file in RECORDINGS_DIR, written once ffmpeg runs and
// kept while something is left to do (the file still being written, or its upload not yet done). A
// relay that stopped without finishing them (killed, crashed, shut down during an upload) finds them at
// its next start (recovery.ts); a recording with nothing left to do has no manifest.
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

const RECORDING_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const manifestSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(RECORDING_ID),
  routerId: z.string().max(200),
  producerIds: z.array(z.string().max(200)).max(2),
  appData: z.record(z.string(), z.unknown()),
  format: z.enum(['webm', 'mkv', 'ogg']),
  /** The file's name in RECORDINGS_DIR: `<id>.<ext>`. */
  file: z.string().regex(/^[0-9a-f-]{36}\.(webm|mkv|ogg)$/),
  startedAt: z.iso.datetime(),
  /** `recording`: ffmpeg was writing the file; `stopped`: the file is finished and its upload pending. */
  state: z.enum(['recording', 'stopped']),
  /** The relay process that owns it: another relay still running on the same RECORDINGS_DIR keeps its own. */
  relayPid: z.int().positive().optional(),
  /** ffmpeg's pid while recording: a restart soon after a crash stops that ffmpeg before it touches the file. */
  pid: z.int().positive().optional(),
  /** `stopped` whose container a shutdown could not finish in time: the next start finishes it first. */
  unfinished: z.boolean().optional(),
  bytes: z.int().min(0).optional(),
  durationMs: z.int().min(0).optional(),
});

export type Manifest = z.infer<typeof manifestSchema>;

/** Manifests are small: a larger file in their place is not one. */
const MAX_MANIFEST_BYTES = 64 * 1024;

export interface Manifests {
  /** Writes (or replaces) the manifest, atomically (a temporary file renamed over it). */
  save(manifest: Manifest): Promise<void>;
  /** Removes it: nothing is left to do for that recording. */
  remove(id: string): Promise<void>;
  /** The manifests in the directory, and the names of the files that were none (unreadable or invalid). */
  list(): Promise<{ manifests: Manifest[]; invalid: string[] }>;
}

export function createManifests(dir: string): Manifests {
  /** One write at a time per recording, in the order asked: a stop's update never lands before the start's write. */
  const queues = new Map<string, Promise<void>>();

  function fileOf(id: string): string {
    if (!RECORDING_ID.test(id)) throw new Error(`not a recording id: ${id}`);
    return path.join(dir, `${id}.json`);
  }

  function serial(id: string, task: () => Promise<void>): Promise<void> {
    const next = (queues.get(id) ?? Promise.resolve()).then(task, task);
    const settled = next.catch(() => {});
    queues.set(id, settled);
    void settled.then(() => {
      if (queues.get(id) === settled) queues.delete(id);
    });
    return next;
  }

  return {
    save(manifest) {
      const file = fileOf(manifest.id);
      return serial(manifest.id, async () => {
        const temporary = `${file}.tmp`;
        await writeFile(temporary, JSON.stringify(manifestSchema.parse(manifest)), { mode: 0o600 });
        await rename(temporary, file);
      });
    },
    remove(id) {
      const file = fileOf(id);
      return serial(id, () => rm(file, { force: true }));
    },
    async list() {
      const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [] as string[];
        throw error;
      });
      const manifests: Manifest[] = [];
      const invalid: string[] = [];
      for (const name of names) {
        if (!name.endsWith('.json') || !RECORDING_ID.test(name.slice(0, -5))) continue;
        try {
          const text = await readFile(path.join(dir, name), 'utf8');
          if (text.length > MAX_MANIFEST_BYTES) throw new Error('too large');
          const manifest = manifestSchema.parse(JSON.parse(text));
          if (`${manifest.id}.json` !== name || !manifest.file.startsWith(`${manifest.id}.`)) throw new Error('names another recording');
          manifests.push(manifest);
        } catch {
          invalid.push(name);
        }
      }
      return { manifests, invalid };
    },
  };
}
