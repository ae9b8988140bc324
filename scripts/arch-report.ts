// npm run arch:report: for each account feature folder (src/accounts/<feature>/) and each relay kind
// folder (src/relay/kinds/<kind>/), the src files OUTSIDE that folder that name it in code: an
// identifier, an import path or a string matching the feature's terms, or a relative import that
// resolves into the folder (comments do not count; files
// whose first line says they are generated are skipped). docs/architecture.md quotes the output
// between `<!-- arch-report:start -->` and `<!-- arch-report:end -->`; test/docs/architecture.test.ts
// fails when it does not. `npm run arch:report -- --write` rewrites that part of the document.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** The features and kinds, each with its folder and the terms that name it. */
export const FEATURES: ReadonlyArray<{ area: 'accounts' | 'relay'; name: string; folder: string; terms: RegExp }> = [
  { area: 'accounts', name: 'audit', folder: 'src/accounts/audit', terms: /audit/i },
  { area: 'accounts', name: 'devices', folder: 'src/accounts/devices', terms: /device/i },
  { area: 'accounts', name: 'email', folder: 'src/accounts/email', terms: /email[-_]?(verif|change)|verify.?email|emailVerif/i },
  { area: 'accounts', name: 'ice-servers', folder: 'src/accounts/ice-servers', terms: /^iceServers(Feature|Routes|Of)$|IceServersView/ },
  { area: 'accounts', name: 'moderation', folder: 'src/accounts/moderation', terms: /moderation|banned|unban|^bans?$|^isBanned$/i },
  { area: 'accounts', name: 'passkeys', folder: 'src/accounts/passkeys', terms: /passkey|webauthn/i },
  { area: 'accounts', name: 'profile', folder: 'src/accounts/profile', terms: /^profile(?!-level)|Profile(View|Changes)$|^(update|get)Profile$/ },
  { area: 'accounts', name: 'reset', folder: 'src/accounts/reset', terms: /password[-_ ]?reset|reset[-_ ]?code|forgot/i },
  { area: 'accounts', name: 'totp', folder: 'src/accounts/totp', terms: /totp|recovery[-_ ]?codes?/i },
  { area: 'relay', name: 'consumers', folder: 'src/relay/kinds/consumers', terms: /(?<!data[-_ ]?|pipe[-_ ]?)consumer|kinds\/consumers/i },
  { area: 'relay', name: 'controls', folder: 'src/relay/kinds/controls', terms: /preferred[-_ ]?layers|key[-_ ]?frame|restart[-_ ]?ice|max[-_ ]?incoming[-_ ]?bitrate|kinds\/controls/i },
  { area: 'relay', name: 'data', folder: 'src/relay/kinds/data', terms: /data[-_ ]?(producer|consumer)|kinds\/data/i },
  { area: 'relay', name: 'pipes', folder: 'src/relay/kinds/pipes', terms: /pipe[-_ ]?(transport|producer|consumer)|kinds\/pipes/i },
  { area: 'relay', name: 'plain', folder: 'src/relay/kinds/plain', terms: /plain[-_ ]?transport|plainTransport|kinds\/plain/i },
  { area: 'relay', name: 'producers', folder: 'src/relay/kinds/producers', terms: /(?<!data[-_ ]?|pipe[-_ ]?)producer|kinds\/producers/i },
  { area: 'relay', name: 'routers', folder: 'src/relay/kinds/routers', terms: /(?<!create)router(?!s?\b)|^routers$|mediasoup[-_ ]?router|kinds\/routers/i },
  { area: 'relay', name: 'transports', folder: 'src/relay/kinds/transports', terms: /web[-_ ]?rtc[-_ ]?transport|kinds\/transports/i },
  { area: 'relay', name: 'whip', folder: 'src/relay/kinds/whip', terms: /whip|whep|kinds\/whip/i },
];

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every .ts/.tsx file under src/, as a path from the repository's root with forward slashes. */
function sourceFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name)) files.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(join(root, 'src'));
  return files.sort();
}

/** The identifiers and the texts of the string, template and regular expression literals of a file; comments left out. */
export function codeWords(text: string): string[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.JSX, text);
  const words: string[] = [];
  // The brace depth at which each open template substitution (`${`) started: only the `}` that brings
  // the depth back there closes the substitution; any other `}` closes an object or a block.
  const substitutions: number[] = [];
  let depth = 0;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.OpenBraceToken) depth += 1;
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (substitutions.at(-1) === depth) {
        // This `}` closes a template's substitution: rescanning it reads the template's next part.
        substitutions.pop();
        kind = scanner.reScanTemplateToken(false);
      } else depth -= 1;
    }
    if (kind === ts.SyntaxKind.TemplateHead || kind === ts.SyntaxKind.TemplateMiddle) substitutions.push(depth);
    // A `/` may start a regular expression literal, whose text would otherwise scan as code.
    if (kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) kind = scanner.reScanSlashToken();
    switch (kind) {
      case ts.SyntaxKind.Identifier:
      case ts.SyntaxKind.PrivateIdentifier:
      case ts.SyntaxKind.StringLiteral:
      case ts.SyntaxKind.NoSubstitutionTemplateLiteral:
      case ts.SyntaxKind.TemplateHead:
      case ts.SyntaxKind.TemplateMiddle:
      case ts.SyntaxKind.TemplateTail:
        words.push(scanner.getTokenValue());
        break;
      case ts.SyntaxKind.RegularExpressionLiteral:
        words.push(scanner.getTokenText());
        break;
      default:
        // Keywords spelled as property names (e.g. `delete`) name nothing a feature owns.
        break;
    }
  }
  return words;
}

/**
 * The paths from the repository's root that a file (`path`, from the root) imports, re-exports or
 * imports dynamically with a relative specifier, e.g. `./plain/ops.js` in `src/relay/kinds/index.ts`
 * gives `src/relay/kinds/plain/ops.js`. Package specifiers are left out.
 */
export function relativeImports(path: string, text: string): string[] {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
    .map((specifier) => posix.normalize(posix.join(posix.dirname(path), specifier)));
}

const isGenerated = (text: string): boolean => /^\/\/.*\bgenerated\b/i.test(text.split('\n', 1)[0] ?? '');

/** The report as a markdown block, the same for the same tree. */
export function archReport(root: string = ROOT): string {
  const files = sourceFiles(root)
    .map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }))
    .filter(({ text }) => !isGenerated(text))
    .map(({ path, text }) => ({ path, words: codeWords(text), imports: relativeImports(path, text) }));
  const rows: string[] = ['| area | feature | folder | src files outside it that name it |', '| --- | --- | --- | --- |'];
  const lists: string[] = [];
  for (const feature of FEATURES) {
    const hasFolder = existsSync(join(root, feature.folder)) && statSync(join(root, feature.folder)).isDirectory();
    const inFolder = (path: string): boolean => path === feature.folder || path.startsWith(`${feature.folder}/`);
    const outside = files
      .filter(({ path, words, imports }) => !inFolder(path) && (words.some((word) => feature.terms.test(word)) || imports.some(inFolder)))
      .map(({ path }) => path);
    rows.push(`| ${feature.area} | ${feature.name} | ${hasFolder ? `\`${feature.folder}/\`` : 'no folder yet'} | ${outside.length} |`);
    // One paragraph a feature, paths from src/, so that the document stays readable with the wide terms.
    const named = outside.length === 0 ? 'none' : outside.map((path) => `\`${path.replace(/^src\//, '')}\``).join(', ');
    lists.push('', `**${feature.area}/${feature.name}** (\`${feature.terms.source}\`${feature.terms.flags ? `, ${feature.terms.flags}` : ''}): ${named}`);
  }
  return [...rows, ...lists, ''].join('\n');
}

export const START = '<!-- arch-report:start -->';
export const END = '<!-- arch-report:end -->';
export const DOC = 'docs/architecture.md';

/** The document's text between the markers (without the newlines next to them), or undefined. */
export function quoted(doc: string): string | undefined {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) return undefined;
  return doc.slice(start + START.length, end).replace(/^\n/, '');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const report = archReport();
  if (process.argv.includes('--write')) {
    const path = join(ROOT, DOC);
    const doc = readFileSync(path, 'utf8');
    if (quoted(doc) === undefined) {
      process.stderr.write(`${DOC} has no ${START} ... ${END} markers: add them where the report belongs, then run again\n`);
      process.exit(1);
    }
    writeFileSync(path, doc.slice(0, doc.indexOf(START) + START.length) + '\n' + report + doc.slice(doc.indexOf(END)));
    process.stdout.write(`${DOC}: report written between the markers\n`);
  } else {
    process.stdout.write(report);
  }
}
