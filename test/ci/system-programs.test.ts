// Issue 27 #13: every system program a test runs is in README's one `apt-get install` line, and
// .ci/run makes its absence a failure (REQUIRE_*), so a test can skip outside CI but never in it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../support/server-process.js';
import { SYSTEM_PROGRAMS } from '../support/system-programs.js';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');

it("README installs every system program in one apt-get line", () => {
  const lines = readme.split('\n').filter((line) => /apt-get install -y /.test(line) && !line.includes('`'));
  expect(lines).toHaveLength(1);
  const packages = lines[0]!.split('apt-get install -y ')[1]!.trim().split(/\s+/);
  expect(new Set(packages)).toEqual(new Set(SYSTEM_PROGRAMS.map((p) => p.debianPackage)));
});

it('.ci/run requires each of them', () => {
  for (const program of SYSTEM_PROGRAMS) {
    expect(ci, program.requireVariable).toMatch(new RegExp(`(export [A-Z0-9_= ]*\\b${program.requireVariable}=1\\b)`));
    expect(ci, program.debianPackage).toMatch(new RegExp(`apt-get install -y -qq [a-z0-9 -]*\\b${program.debianPackage}\\b`));
  }
});
