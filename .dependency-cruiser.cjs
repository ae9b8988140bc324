// The module layout's boundaries, checked by `npm run lint:deps`: no import cycles, and what each area
// (src/accounts, src/relay, src/events; src/compose.ts wires them) may import of the others.
const accounts = '^src/(accounts|auth)/';
const relay = '^src/(relay|media)/';
const events = '^src/events/';
const areas = [accounts, relay, events];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes load order matter and keeps the files from being understood or moved one at a time.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'accounts-not-to-relay',
      severity: 'error',
      comment: 'Accounts and the relay are separate areas: what both need belongs in a leaf (src/http, src/config).',
      from: { path: accounts },
      to: { path: relay },
    },
    {
      name: 'relay-not-to-accounts',
      severity: 'error',
      comment: 'The relay and accounts are separate areas: what both need belongs in a leaf (src/http, src/config).',
      from: { path: relay },
      to: { path: accounts },
    },
    {
      name: 'docs-observability-not-to-areas',
      severity: 'error',
      comment: 'docs/ serves what the modules generate and observability/ holds the registry the modules register into: neither reaches into an area.',
      from: { path: '^src/(docs|observability)/' },
      to: { path: areas },
    },
    {
      name: 'http-config-are-leaves',
      severity: 'error',
      comment: 'src/http (shared vocabulary, middleware), src/config and src/turn (TURN credentials, issue 28) are leaves that every area imports; importing an area back makes a cycle of layers.',
      from: { path: '^src/(http/|config/|config[.]ts$|turn/)' },
      to: { path: areas },
    },
    {
      name: 'nothing-to-client',
      severity: 'error',
      comment: "src/client is what a signaling-server author installs; the server must not depend on it (it would ship client code in the server's types and the other way round).",
      from: { path: '^src/', pathNot: '^src/client/' },
      to: { path: '^src/client/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import the cruiser cannot resolve is invisible to every rule above, so it fails the check rather than passing silently.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    // Count `import type` too: a type-only import couples the areas as much as a runtime one.
    tsPreCompilationDeps: true,
    // NodeNext: `./x.js` in the source resolves to `./x.ts` (the cruiser maps the extension itself).
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    skipAnalysisNotInRules: true,
  },
};
