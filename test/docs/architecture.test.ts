// docs/architecture.md quotes `npm run arch:report` (scripts/arch-report.ts: for each account feature
// and relay kind, the src files outside its folder that name it) between its arch-report markers: a
// feature that grows a file outside its folder changes the report, and the document must say so.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { archReport, codeWords, DOC, END, quoted, relativeImports, START } from '../../scripts/arch-report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HOW = `run \`npm run arch:report -- --write\` (it rewrites the part of ${DOC} between ${START} and ${END}), review the diff and commit it`;

describe('the architecture report', () => {
  it(`is quoted verbatim in ${DOC}`, () => {
    const doc = readFileSync(`${ROOT}/${DOC}`, 'utf8');
    const inDoc = quoted(doc);
    expect(inDoc, `${DOC} has no ${START} ... ${END} markers: add them, then ${HOW}`).toBeDefined();
    expect(inDoc, `${DOC} does not quote the current report: ${HOW}`).toBe(archReport(ROOT));
  });

  it('reads names in code, not in comments', () => {
    const words = codeWords("// passkey\n/* totp */ const plainTransport = 'e-mail // mfa'; import x from './kinds/plain/ops.js'; const r = /webauthn/;");
    expect(words).toEqual(['plainTransport', 'e-mail // mfa', 'x', './kinds/plain/ops.js', 'r', '/webauthn/']);
  });

  it('reads a comment after an object or a block closed by `}` as a comment, and a template after `${...}` as a template', () => {
    const words = codeWords(
      "const o = { a: 1 };\n/** @example plainTransport */ function f() { return 1; } // totp\nconst t = `x${ { k: 1 }.k }plainTransport${f()}y`; // passkey",
    );
    expect(words).toEqual(['o', 'a', 'f', 't', 'x', 'k', 'k', 'plainTransport', 'f', 'y']);
  });

  it('resolves relative import, export and dynamic import paths against the importing file', () => {
    const text = "import { a } from './plain/ops.js';\nexport * from '../contract/events.js';\nconst m = await import('./plain/row.js');\nimport ts from 'typescript';";
    expect(relativeImports('src/relay/kinds/index.ts', text).sort()).toEqual(['src/relay/contract/events.js', 'src/relay/kinds/plain/ops.js', 'src/relay/kinds/plain/row.js']);
  });
});
