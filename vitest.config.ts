import { defineConfig } from 'vitest/config';

// The suite runs on embedded PGlite; when TEST_DATABASE_URL is set, the database-backed tests run
// again on that PostgreSQL server (each test app creates and drops its own database there).
const projects = [
  { test: { name: 'pglite', include: ['test/**/*.test.ts'], env: { TEST_DB: 'pglite' } } },
];
if (process.env.TEST_DATABASE_URL) {
  projects.push({
    test: { name: 'postgres', include: ['test/auth/**/*.test.ts', 'test/db/**/*.test.ts', 'test/app/**/*.test.ts'], env: { TEST_DB: 'postgres' } },
  });
}

export default defineConfig({
  test: {
    projects,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
