// src/client/wire.gen.ts is what scripts/client-types.ts generates from the contracts today: a change
// to a contract's schema that the file does not show fails here (run `npm run client:types`).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIRST_LINE, OUTPUT, renderWireTypes } from '../../scripts/client-types.js';

describe('the generated wire types', () => {
  it('are what the contracts give today', () => {
    const committed = readFileSync(OUTPUT, 'utf8');
    expect(committed.split('\n', 1)[0]).toBe(FIRST_LINE);
    expect(committed, 'src/client/wire.gen.ts is stale: run `npm run client:types` and commit the result').toBe(renderWireTypes());
  });

  it('import nothing, so the package declarations carry no server code', () => {
    expect(readFileSync(OUTPUT, 'utf8')).not.toMatch(/^\s*(import|export .* from)\b/m);
  });
});
