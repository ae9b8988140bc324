// Runs after every test file (vitest setupFiles): the file's recorded JSON answers must validate
// against the documented response schemas (test/support/answers.ts). ANSWERS_REPORT=<file> appends
// each file's counts as a JSON line (for the figures in the notes).
import { appendFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { checkAnswers } from './answers.js';

afterAll(async () => {
  const report = await checkAnswers();
  const out = process.env.ANSWERS_REPORT;
  if (out) appendFileSync(out, `${JSON.stringify({ file: expect.getState().testPath, checked: report.checked, unmatched: report.unmatched, failures: report.failures.length })}\n`);
  expect(report.failures, 'answers that do not validate against their documented response schema').toEqual([]);
});
