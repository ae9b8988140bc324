// The relay's event catalog lives in its contract (src/relay/contract/events.ts); this path is kept
// for the end-to-end tests and the docs test that import it from here.
export * from '../contract/events.js';
