// The module layout's boundaries, checked by `npm run lint:deps`: the areas (accounts, the relay, the
// generic event bus) import each other only through leaves (src/http, src/config, src/turn), and
// nothing imports in a cycle.
const accounts = '^src/accounts/';
const relay = '^src/relay/';
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
      comment: 'src/http (shared vocabulary, middleware), src/config and src/turn (TURN credentials) are leaves that every area imports; importing an area back makes a cycle of layers.',
      from: { path: '^src/(http/|config/|config[.]ts$|turn/)' },
      to: { path: areas },
    },
    {
      name: 'relay-machinery-reads-rows',
      severity: 'error',
      comment: "The relay's shared machinery (engine, registry, rooms, events) reads the kinds through their table (src/relay/kinds/resources.ts) and never reaches into a kind's folder: a new kind is its folder and its rows.",
      from: { path: '^src/relay/(engine|registry|rooms|events)/' },
      to: { path: '^src/relay/kinds/[^/]+/' },
    },
    {
      name: 'nothing-to-client',
      severity: 'error',
      comment: "src/client is what a signaling-server author installs; the server must not depend on it (it would ship client code in the server's types and the other way round).",
      from: { path: '^src/', pathNot: ['^src/client/', '^src/relay/kinds/[^/]+/client[.]ts$'] },
      to: { path: '^src/client/' },
    },
    {
      name: 'kind-clients-client-only',
      severity: 'error',
      comment: "A relay kind's client methods (src/relay/kinds/<kind>/client.ts) are part of the typed client: only src/client assembles them, and they import types only (the wire types, Hono's RPC client, the relay's API type), so neither side ships the other's code.",
      from: { path: '^src/', pathNot: '^src/client/' },
      to: { path: '^src/relay/kinds/[^/]+/client[.]ts$' },
    },
    {
      name: 'kind-clients-import-types',
      severity: 'error',
      comment: "A relay kind's client methods import only the client's kit and wire types and the relay's API type, never server code.",
      from: { path: '^src/relay/kinds/[^/]+/client[.]ts$' },
      to: { pathNot: ['^src/client/(kit|wire[.]gen)[.]ts$', '^src/relay/contract/api[.]ts$', '^node_modules/hono/'] },
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
