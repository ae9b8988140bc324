import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// The suite runs on embedded PGlite; when TEST_DATABASE_URL is set, the database-backed tests run
// again on that PostgreSQL server (each test app creates and drops its own database there).
// The relay's engine-fed events run on both too (issue 12): the app they come from is built on either.
// `extends: true`: inline projects do not inherit the root options (timeouts, pool) otherwise.
const projects: TestProjectInlineConfiguration[] = [
  { extends: true, test: { name: 'pglite', include: ['test/**/*.test.ts'], env: { TEST_DB: 'pglite' } } },
];
if (process.env.TEST_DATABASE_URL) {
  projects.push({
    extends: true,
    test: { name: 'postgres', include: ['test/accounts/**/*.test.ts', 'test/db/**/*.test.ts', 'test/app/**/*.test.ts', 'test/reliability/**/*.db.test.ts', 'test/relay/events/bridge.test.ts'], env: { TEST_DB: 'postgres' } },
  });
}

export default defineConfig({
  test: {
    projects,
    // Real argon2, real PostgreSQL and real mediasoup workers on a 2-core machine under a parallel suite.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Every JSON answer of a test app validates against its documented response schema.
    setupFiles: ['test/support/setup-answers.ts'],
  },
});
