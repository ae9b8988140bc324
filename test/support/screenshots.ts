// Where the browser tests save their screenshots: a temporary folder, so that a test run changes no
// tracked file. `npm run docs:pictures` runs those tests with DOCS_PICTURES_DIR=docs to refresh the
// pictures the docs show (docs/browser-demo.png, docs/api-docs.png).
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The path to save the screenshot `name` at (its folder made if missing). */
export function screenshotPath(name: string): string {
  const dir = path.resolve(process.env.DOCS_PICTURES_DIR ?? path.join(tmpdir(), 'chat-backend-screenshots'));
  mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}
