import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../src/config/index.js';

/** The rows of README.md's "Configuration" table(s): names and what the default column says of each. */
function readmeVariables(): Map<string, string> {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Configuration\n'));
  if (!section) throw new Error('README.md has no "## Configuration" section');
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | `NAME` | default | meaning |, or | `A` / `B` | `1` / `2` | meaning |
    if (cells.length < 4 || !cells[1]?.startsWith('`')) continue;
    const names = [...cells[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!);
    const defaults = cells[2]!.split(' / ');
    names.forEach((name, i) => rows.set(name, (names.length === defaults.length ? defaults[i] : cells[2])!.trim()));
  }
  return rows;
}

describe('CONFIG_VARIABLES', () => {
  const documented = readmeVariables();
  const read = new Map(CONFIG_VARIABLES.map((v) => [v.name, v]));

  it('lists each variable once, with its area', () => {
    expect(read.size).toBe(CONFIG_VARIABLES.length);
    expect(read.get('NODE_ENV')?.area).toBe('server');
    expect(read.get('DATABASE_URL')?.area).toBe('database');
    expect(read.get('SMTP_URL')?.area).toBe('accounts');
    expect(read.get('RTC_MIN_PORT')?.area).toBe('relay');
    expect(read.get('EVENTS_WEBHOOK_URL')?.area).toBe('events');
  });

  it('is what README.md documents, no more, no less', () => {
    expect([...read.keys()].filter((name) => !documented.has(name)), 'read but not in README.md').toEqual([]);
    expect([...documented.keys()].filter((name) => !read.has(name)), 'in README.md but not read').toEqual([]);
  });

  it('has the defaults README.md gives', () => {
    let literals = 0;
    for (const [name, column] of documented) {
      const literal = /^`([^`]*)`$/.exec(column);
      if (literal) {
        literals++;
        expect(read.get(name)?.default, name).toBe(literal[1]);
      } else if (column === 'unset') expect(read.get(name)?.default, name).toBeUndefined();
    }
    expect(literals).toBeGreaterThan(40);
  });

  it('spells each default as the environment would: setting them all changes nothing', () => {
    const defaults = Object.fromEntries(CONFIG_VARIABLES.flatMap((v) => (v.default === undefined ? [] : [[v.name, v.default]])));
    expect(Object.keys(defaults).length).toBeGreaterThan(40);
    expect(loadConfig(defaults)).toEqual(loadConfig({}));
  });
});
